/**
 * The one way to start or resume an execution — the CLI and the app both come here, so a run
 * passes the same gates, gets the same stop conditions and failure limits and the same retune
 * rules whoever starts it: gates → config → target → (record | retune) → runner.
 */
import { GateError, InputError } from '../../../shared/errors.ts';
import type { Config, Job, Plan } from '../../../shared/schemas.ts';
import type { ExecutorEvent } from '../executor/events.ts';
import { Runner, type Reprocess } from '../executor/runner.ts';
import type { PartitionTarget } from '../executor/types.ts';
import type { SanityReport } from '../safety/sanity.ts';
import { StopConditions, expectedRowsFrom } from '../safety/stopConditions.ts';
import type { Store } from '../store/index.ts';
import { backfillApplicationName } from '../targets/postgres/partitionTarget.ts';
import { canaryHold } from './canary.ts';
import { checkExecutionGates } from './gates.ts';
import type { Answers } from './questions.ts';
import { jobChanged } from './planning.ts';
import { openTarget, recordRun, type PreparedPlan } from './prepare.ts';
import { effectivePlan, retuneFor, type PlanChange } from './retune.ts';
import { auditDelivery } from '../notify/audit.ts';
import { followRun } from '../notify/followRun.ts';
import { notifierFor, type Notifier } from '../notify/notifier.ts';

export interface ExecutionRequest {
  store: Store;
  /** the connections, with what the app adds from its own store */
  config: Config;
  env: NodeJS.ProcessEnv;
  /** the signed plan and its job, prepared (partitions, tier, red flags, hashes) */
  prepared: PreparedPlan;
  /** who executes: the four-eyes gate compares it with the signer */
  actor: string;
  /** the workspace is the Sandbox: kept on a new run for its notes */
  sandbox?: boolean;
  /** throttle and stop thresholds to change before resuming (refused for anything else) */
  changes?: readonly PlanChange[];
  reprocess?: Reprocess;
  /** sees the source sanity report the gate took, to show it */
  onSanity?: (report: SanityReport) => void;
  /** hears what `changes` retuned, in words, once it is recorded (the lease is ours) */
  onRetuned?: (summary: string) => void;
  onEvent?: (event: ExecutorEvent) => void;
  /** a line for people from beside the run: a notification that could not be delivered */
  onNotice?: (text: string) => void;
}

export type Execution =
  /** `notifications`: what the run tells the workspace's notify targets; drain it before the process ends */
  | { status: 'ready'; runner: Runner; notifications: Notifier | null }
  /** the run already succeeded and nothing was asked to be redone */
  | { status: 'done'; runId: string };

/**
 * A run that does not exist yet is recorded only once every gate has passed and its target
 * answers, so a refusal or a dead server leaves nothing half-made behind. The source sanity
 * gate measures the source as it is now, on a resume too: a source that went bad since the
 * last session stops the run before it writes again.
 */
export async function openExecution(req: ExecutionRequest): Promise<Execution> {
  const { store, prepared, actor } = req;
  const runId = prepared.plan.request_id;
  const run = store.runs.get(runId);
  if (run) {
    if (run.planHash !== prepared.planHash)
      throw new InputError(`run "${runId}" exists with a different plan (${run.planHash.slice(0, 12)}…)`, {
        field: 'request_id',
        value: runId,
        hint: 'a signed plan never changes: pick a new run id, or resume the run as planned',
      });
    if (run.jobHash !== prepared.jobHash) throw jobChanged(run);
    if (run.status === 'abandoned')
      throw new GateError(`run "${runId}" was abandoned after its canary: it writes nothing more`, [
        run.haltReason ?? 'abandoned by the operator',
        "plan a new run with a new run id once the canary's problem is fixed",
      ]);
    if (run.status === 'succeeded' && (req.reprocess ?? 'missing') === 'missing') return { status: 'done', runId };
  }
  const current = run ? effectivePlan(prepared.plan, run.settings) : prepared.plan;
  const retune = run && req.changes ? retuneFor(runId, current, req.changes) : null;
  const plan = retune ? effectivePlan(current, retune.settings) : current;

  let answers: Answers | undefined;
  const config = configForPlan(req.config, prepared.job, plan);
  // One target for the questions gate and the run: its bucket checks, catalog lookups and
  // cleanup of abandoned objects are done once. Opened when the gate first asks for it.
  let opened: PartitionTarget | undefined;
  const theTarget = (): PartitionTarget => (opened ??= openTarget(config, prepared.job, plan.write_mode, req.env, store));
  const monitor = await (async () => {
    try {
      await checkExecutionGates({
        prepared,
        store,
        config: req.config,
        operator: actor,
        env: req.env,
        onSanity: req.onSanity,
        executed: plan,
        onQuestions: (a) => (answers = a),
        target: theTarget,
      });
      // Before anything is recorded: a probe whose token is not set, or whose SQL is not one
      // read-only SELECT, is a configuration error (exit 2) that leaves no run behind.
      return stopConditionsFor({ ...req, config, plan, runId });
    } catch (err) {
      await opened?.close();
      throw err;
    }
  })();
  const target = theTarget();
  try {
    await monitor.check();
    await target.prepare();
    if (!run) recordRun(store, prepared, actor, req.sandbox);
    recordAccepted(store, prepared, answers, actor);
    // Recorded once the lease is ours: a resume refused because another executor drives the run
    // must not retune that executor behind its back.
    const onLeased = retune
      ? () => {
          store.runs.updateSettings(runId, retune.settings, actor, { summary: retune.summary, via: 'resume' });
          req.onRetuned?.(retune.summary);
        }
      : undefined;
    // Told as it goes (throttled long, halted, failed, succeeded); never in the run's way.
    const notifications = notifierFor(req.config, req.env, { log: req.onNotice, record: auditDelivery(store, runId, actor) });
    const told = notifications
      ? followRun(notifications, { runId, job: prepared.job.name, summary: prepared.summary, sandbox: Boolean(req.config.sandbox) })
      : null;
    const onEvent = told
      ? (e: ExecutorEvent) => {
          told.onEvent(e);
          req.onEvent?.(e);
        }
      : req.onEvent;
    return {
      status: 'ready',
      runner: createRunner({ ...req, onEvent, job: prepared.job, plan, target, monitor, onLeased }),
      notifications,
    };
  } catch (err) {
    // Nothing opened here survives a refusal: the target's and the monitor's sessions close before the error leaves.
    await target.close();
    await monitor.close();
    throw err;
  }
}

interface MonitorSetup {
  store: Store;
  config: Config;
  prepared: PreparedPlan;
  /** the plan as executed: its stop thresholds may be retuned */
  plan: Plan;
  runId: string;
  env?: NodeJS.ProcessEnv;
}

function stopConditionsFor(s: MonitorSetup): StopConditions {
  const job = s.prepared.job;
  // The dry run on record belongs to the signed plan, not to its retuned version.
  const dryRun = s.store.evidence.latest({ planHash: s.prepared.planHash, kind: 'dry-run' });
  return new StopConditions({
    plan: s.plan,
    config: s.config,
    targetConnection: job.target.connection,
    targetTable: job.target.kind === 's3' ? undefined : job.target.table,
    applicationName: backfillApplicationName(job.name),
    timeZone: job.timezone,
    expectedRows: expectedRowsFrom(dryRun?.body),
    // `tune` changes the levels of a running run: read them from the ledger at each measurement.
    current: () => {
      const settings = s.store.runs.get(s.runId)?.settings;
      return settings ? effectivePlan(s.prepared.plan, settings).stop : s.plan.stop;
    },
    env: s.env,
  });
}

interface RunnerSetup {
  store: Store;
  prepared: PreparedPlan;
  job: Job;
  plan: Plan;
  target: PartitionTarget;
  monitor: StopConditions;
  actor: string;
  reprocess?: Reprocess;
  onEvent?: (event: ExecutorEvent) => void;
  onLeased?: () => void;
}

function createRunner(s: RunnerSetup): Runner {
  const monitor = s.monitor;
  return new Runner({
    store: s.store,
    runId: s.plan.request_id,
    target: s.target,
    actor: s.actor,
    reprocess: s.reprocess,
    maxConsecutiveFailures: s.plan.stop.max_consecutive_failures,
    monitor,
    onEvent: s.onEvent,
    onLeased: s.onLeased,
    canary: canaryHold(s.store, s.prepared, s.target, s.actor),
  });
}

/**
 * What the run does on purpose that a red flag would otherwise refuse — partitions whose source
 * is gone deleted (accept_purged), closed partitions overwritten, flags acknowledged — kept as
 * evidence of this execution, before it writes, so the note says it was meant.
 */
function recordAccepted(store: Store, prepared: PreparedPlan, answers: Answers | undefined, actor: string): void {
  const accepted = (answers?.partitions ?? []).filter((f) => f.accepted !== undefined);
  if (accepted.length === 0) return;
  store.evidence.add({
    runId: prepared.plan.request_id,
    planHash: prepared.planHash,
    kind: 'accepted-flags',
    body: { flags: accepted, deleted: accepted.filter((f) => f.code === 'source-gone').map((f) => f.key) },
    actor,
  });
}

/**
 * The plan's max_lock_wait_ms (else critical_lock_wait_ms) also bounds the target sessions' lock_timeout: the executor never
 * waits in a lock queue longer than the plan allows (where it would block readers behind it).
 */
export function configForPlan(config: Config, job: Job, plan: Plan): Config {
  const max = plan.stop.max_lock_wait_ms ?? plan.stop.critical_lock_wait_ms;
  const target = config.connections[job.target.connection];
  if (max === undefined || target?.kind !== 'postgres' || target.lock_timeout_ms <= max) return config;
  return { ...config, connections: { ...config.connections, [job.target.connection]: { ...target, lock_timeout_ms: max } } };
}
