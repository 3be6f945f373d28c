/** `run-backfill <job> …`: plan, gates, dry run or execution, resume. */
import { hostname, userInfo } from 'node:os';
import { GateError, InputError } from '../../shared/errors.ts';
import type { Config, Job, Plan } from '../../shared/schemas.ts';
import { planSchema } from '../../shared/schemas.ts';
import type { Reprocess } from '../engine/executor/runner.ts';
import { configForPlan, createRunner } from '../engine/runbook/execute.ts';
import type { RunOutcome } from '../engine/executor/events.ts';
import type { PartitionTarget } from '../engine/executor/types.ts';
import { loadConfig, loadJob, loadPlan } from '../engine/plan/load.ts';
import { dryRun } from '../engine/runbook/dryRun.ts';
import { checkExecutionGates } from '../engine/runbook/gates.ts';
import { openTarget, preparePlan, recordRun, type PreparedPlan } from '../engine/runbook/prepare.ts';
import type { Store } from '../engine/store/index.ts';
import { EXIT, type ExitCode } from './exitCodes.ts';
import { checkFlagsAgainstPlan, planFromFlags, type RunFlags } from './planFromFlags.ts';
import type { Reporter } from './progress.ts';
import { formatDryRun, formatSanity } from './tables.ts';
import { runSanityChecks } from '../engine/safety/sanity.ts';

const SANDBOX_BANNER = '[Sandbox] training workspace — embedded PostgreSQL and S3 with generated data, not production.';

export interface RunOptions extends RunFlags {
  /** resolved by resolveWorkspace before the command runs */
  config: string;
  jobs: string;
  plan?: string;
  dryRun?: boolean;
  resume?: boolean;
  reprocess?: Reprocess;
  /** who executes (an identity name, for the four-eyes gate); default: the OS user@host */
  operator?: string;
}

export interface LoadedPlan {
  config: Config;
  job: Job;
  plan: Plan;
  prepared: PreparedPlan;
}

/** Job, plan (from flags or --plan FILE) and its preparation: shared by run and check. */
export function loadRunPlan(jobName: string | undefined, opts: RunOptions, store: Store, out: Reporter): LoadedPlan {
  const config = loadConfig(opts.config);
  if (config.sandbox) out.say(SANDBOX_BANNER);
  let plan: Plan;
  let job: Job;
  if (opts.plan) {
    plan = loadPlan(opts.plan);
    if (jobName && jobName !== plan.job)
      throw new InputError(`job "${jobName}" contradicts the plan's job "${plan.job}"`, { file: opts.plan, field: 'job', value: jobName });
    job = loadJob(opts.jobs, plan.job, config).job;
    checkFlagsAgainstPlan(plan, opts, opts.plan);
  } else {
    if (!jobName)
      throw new InputError('name the job to run, e.g. `run-backfill order-daily-mart --from 2026-05-01 --to 2026-07-01`', {
        field: '<job>',
      });
    job = loadJob(opts.jobs, jobName, config).job;
    plan = planFromFlags(job, opts);
  }
  return { config, job, plan, prepared: preparePlan(job, plan, store) };
}

export async function runCommand(jobName: string | undefined, opts: RunOptions, store: Store, out: Reporter): Promise<ExitCode> {
  if (opts.resume) return resume(opts, store, out);
  const { config, job, plan, prepared } = loadRunPlan(jobName, opts, store, out);
  // A dry run is the cure for the no-dry-run flag: don't list it as a problem of itself.
  describePlan(opts.dryRun ? { ...prepared, flags: prepared.flags.filter((f) => f.code !== 'no-dry-run') } : prepared, out);

  if (opts.dryRun) {
    const target = openTarget(configForPlan(config, job, plan), job, plan.write_mode);
    const result = await dryRun(prepared, target, store);
    out.record('dry-run', { planHash: prepared.planHash, partitions: result.rows }, formatDryRun(result.rows));
    out.say(
      `Dry run kept as evidence #${result.evidenceId} for plan ${prepared.planHash.slice(0, 12)}. Nothing was written to the target.`,
    );
    return EXIT.ok;
  }

  const existing = store.runs.get(plan.request_id);
  if (existing) {
    throw new InputError(
      `run "${plan.request_id}" already exists (status ${existing.status}): add --resume to continue it, or pick a new --run-id`,
      {
        field: '--run-id',
        value: plan.request_id,
      },
    );
  }
  const sanity = await runSanityChecks(prepared, config, store);
  out.record('sanity-check', { ...sanity }, formatSanity(sanity));
  await checkExecutionGates({ prepared, store, config, operator: actor(opts.operator), sanity });
  // Reach the target and resolve every name before anything is recorded: a dead server or a
  // wrong table leaves no half-made run behind.
  const target = openTarget(configForPlan(config, job, plan), job, plan.write_mode, process.env, store);
  await prepareOrClose(target);
  recordRun(store, prepared, actor(opts.operator), config.sandbox);
  return execute(store, { config, job, plan }, target, opts.reprocess ?? 'missing', out, opts.operator);
}

async function resume(opts: RunOptions, store: Store, out: Reporter): Promise<ExitCode> {
  if (!opts.runId) throw new InputError('--resume needs --run-id: the run to continue', { field: '--run-id' });
  const run = store.runs.get(opts.runId);
  if (!run)
    throw new InputError(`no run "${opts.runId}" in ${store.file}: check the id with \`run-backfill status\``, {
      field: '--run-id',
      value: opts.runId,
    });
  const stored = store.plans.get(run.planHash);
  if (!stored) throw new InputError(`run "${run.runId}" has no plan on record`, { field: '--run-id', value: run.runId });
  const plan = planSchema.parse(stored.plan);
  checkFlagsAgainstPlan(plan, { ...opts, runId: undefined }, `the plan of run ${run.runId}`);
  const config = loadConfig(opts.config);
  if (config.sandbox) out.say(SANDBOX_BANNER);
  const { job } = loadJob(opts.jobs, run.jobName, config);
  const prepared = preparePlan(job, plan, store);
  if (prepared.jobHash !== run.jobHash) {
    throw new GateError(`job "${job.name}" changed since run "${run.runId}" started: resuming would mix two versions of the SQL`, [
      `job hash at start ${run.jobHash.slice(0, 12)}, now ${prepared.jobHash.slice(0, 12)}`,
      'restore the job file, or start a new run with a new --run-id',
    ]);
  }
  if (run.status === 'succeeded' && (opts.reprocess ?? 'missing') === 'missing') {
    out.say(`Run ${run.runId} already succeeded; nothing to resume (use --reprocess all to redo it).`);
    return EXIT.ok;
  }
  describePlan(prepared, out);
  const target = openTarget(configForPlan(config, job, plan), job, plan.write_mode, process.env, store);
  await prepareOrClose(target);
  return execute(store, { config, job, plan }, target, opts.reprocess ?? 'missing', out, opts.operator);
}

async function prepareOrClose(target: PartitionTarget): Promise<void> {
  try {
    await target.prepare();
  } catch (err) {
    await target.close();
    throw err;
  }
}

async function execute(
  store: Store,
  loaded: { config: Config; job: Job; plan: Plan },
  target: PartitionTarget,
  reprocess: Reprocess,
  out: Reporter,
  operator?: string,
): Promise<ExitCode> {
  const runner = createRunner({ store, ...loaded, target, actor: actor(operator), reprocess, onEvent: (e) => out.event(e) });
  // First Ctrl-C: finish the partition in flight. Second: roll it back now. Either way resumable.
  let interrupts = 0;
  const onSignal = (): void => {
    interrupts += 1;
    if (interrupts === 1) runner.requestStop('interrupted (Ctrl-C): finishing the partition in flight; press Ctrl-C again to roll it back');
    else runner.abortNow('interrupted twice: rolling back the partition in flight');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let outcome: RunOutcome;
  try {
    outcome = await runner.run();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  switch (outcome.status) {
    case 'succeeded':
      return EXIT.ok;
    case 'failed':
      return outcome.badInput !== undefined ? EXIT.usage : EXIT.failed;
    case 'paused':
    case 'halted':
      out.say(`Resume with: run-backfill --resume --run-id ${outcome.runId}`);
      return EXIT.halted;
  }
}

function describePlan(p: PreparedPlan, out: Reporter): void {
  out.record(
    'plan',
    { requestId: p.plan.request_id, planHash: p.planHash, summary: p.summary, tier: p.tier, tierReasons: p.tierReasons, redFlags: p.flags },
    [
      `Plan ${p.plan.request_id} (${p.planHash.slice(0, 12)}): ${p.job.name}, ${p.summary}, ${p.plan.write_mode}`,
      `Automation tier: ${p.tier}${p.tierReasons.length ? ` (${p.tierReasons.join('; ')})` : ''}`,
      ...p.flags.map((f) => `  ${f.severity === 'block' ? 'BLOCK' : 'warn '} ${f.code}: ${f.message}`),
    ].join('\n'),
  );
}

function actor(operator?: string): string {
  if (operator) return operator;
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return `unknown@${hostname()}`;
  }
}
