/** `run-backfill <job> …`: plan, gates, dry run or execution, resume — executions through the engine's openExecution, as the app's. */
import { hostname, userInfo } from 'node:os';
import { InputError } from '../../shared/errors.ts';
import type { Config, Job, Plan } from '../../shared/schemas.ts';
import { planSchema } from '../../shared/schemas.ts';
import type { Reprocess } from '../engine/executor/runner.ts';
import { configForPlan, openExecution, type Execution } from '../engine/runbook/execute.ts';
import { loadConfig, loadJob, loadPlan } from '../engine/plan/load.ts';
import { dryRun } from '../engine/runbook/dryRun.ts';
import { notifyDryRunReady } from '../engine/notify/dryRunReady.ts';
import { openTarget, preparePlan, type PreparedPlan } from '../engine/runbook/prepare.ts';
import type { Store } from '../engine/store/index.ts';
import { EXIT, type ExitCode } from './exitCodes.ts';
import { checkFlagsAgainstPlan, planFromFlags, planWithChanges, resumeChanges, type RunFlags } from './planFromFlags.ts';
import type { Reporter } from './progress.ts';
import { formatDryRun, formatSanity } from './tables.ts';
import { formatCanary, formatEstimate, formatFlags, formatImpact, formatPartitionFlags } from './dryRunReport.ts';
import { blocking, signedFlags } from '../../shared/redFlags.ts';
import type { CanaryBody } from '../../shared/canary.ts';
import { canaryEvidence } from '../engine/runbook/canary.ts';

const SANDBOX_BANNER = '[Sandbox] training workspace — embedded PostgreSQL and S3 with generated data, not production.';

export interface RunOptions extends RunFlags {
  /** resolved by resolveWorkspace before the command runs */
  config: string;
  jobs: string;
  plan?: string;
  dryRun?: boolean;
  resume?: boolean;
  reprocess?: Reprocess;
  runId?: string;
  from?: string;
  to?: string;
  /** who executes (an identity name, for the four-eyes gate); default: the OS user@host */
  operator?: string;
}

export interface LoadedPlan {
  config: Config;
  job: Job;
  plan: Plan;
  prepared: PreparedPlan;
}

/** Job, plan (from flags or --plan FILE) and its preparation: shared by run, check and snapshot. */
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

/** The run named by --run-id, with its signed plan and the job it was planned with. */
function loadRecordedRun(jobName: string | undefined, opts: RunOptions, store: Store, out: Reporter): LoadedPlan {
  if (!opts.runId) throw new InputError('--resume needs --run-id: the run to continue', { field: '--run-id' });
  if (opts.plan)
    throw new InputError('--resume continues the run with its own signed plan: drop --plan', { field: '--plan', value: opts.plan });
  const run = store.runs.get(opts.runId);
  if (!run)
    throw new InputError(`no run "${opts.runId}" in ${store.file}: check the id with \`run-backfill status\``, {
      field: '--run-id',
      value: opts.runId,
    });
  const stored = store.plans.get(run.planHash);
  if (!stored) throw new InputError(`run "${run.runId}" has no plan on record`, { field: '--run-id', value: run.runId });
  if (jobName && jobName !== run.jobName)
    throw new InputError(`job "${jobName}" is not run ${run.runId}'s job "${run.jobName}"`, { field: '<job>', value: jobName });
  const plan = planSchema.parse(stored.plan);
  const config = loadConfig(opts.config);
  if (config.sandbox) out.say(SANDBOX_BANNER);
  const { job } = loadJob(opts.jobs, run.jobName, config);
  return { config, job, plan, prepared: preparePlan(job, plan, store) };
}

export async function runCommand(jobName: string | undefined, opts: RunOptions, store: Store, out: Reporter): Promise<ExitCode> {
  if (opts.resume) return execute(loadRecordedRun(jobName, opts, store, out), opts, store, out);
  const loaded = loadRunPlan(jobName, opts, store, out);
  const { config, job, plan, prepared } = loaded;
  if (opts.dryRun) {
    // A dry run is the cure for the no-dry-run flag: don't list it as a problem of itself.
    const planFlags = prepared.flags.filter((f) => f.code !== 'no-dry-run');
    // The per-partition questions (retention) are listed once, with the dry run's answers below.
    describePlan({ ...prepared, flags: planFlags.filter((f) => !f.partitions) }, out);
    const target = openTarget(configForPlan(config, job, plan), job, plan.write_mode);
    const result = await dryRun({ prepared, target, store, config, env: process.env, jobsDir: opts.jobs });
    // Partition flags the plan already showed (retention) come back with the dry run's; each once
    // — the same rule the sign-off applies to what it approves.
    const flags = signedFlags(prepared.flags, { redFlags: result.answers.flags });
    const byKey = new Map<string, string[]>();
    for (const f of result.answers.partitions)
      byKey.set(f.key, [...(byKey.get(f.key) ?? []), `${f.severity === 'block' ? '!' : ''}${f.code}`]);
    out.record(
      'dry-run',
      {
        planHash: prepared.planHash,
        partitions: result.rows.map((r) => ({ ...r, flags: result.answers.partitions.filter((f) => f.key === r.partition.key) })),
        redFlags: flags,
        estimate: result.answers.estimate,
        impact: result.impact,
      },
      [
        formatDryRun(result.rows, byKey),
        formatPartitionFlags(result.answers.partitions),
        formatFlags(result.answers.flags),
        formatEstimate(result.answers.estimate),
        formatImpact(result.impact),
      ]
        .filter(Boolean)
        .join('\n\n'),
    );
    out.say(
      `Dry run kept as evidence #${result.evidenceId} for plan ${prepared.planHash.slice(0, 12)}. Nothing was written to the target.`,
    );
    await notifyDryRunReady({ config, env: process.env, store, prepared, rows: result.rows, actor: actor(opts.operator) }, (t) =>
      out.say(t),
    );
    const blocks = blocking(flags);
    if (blocks.length > 0) {
      out.say(`The run would be refused: ${blocks.length} red flag(s) block it (${blocks.map((f) => f.code).join(', ')}).`);
      return EXIT.refused;
    }
    return EXIT.ok;
  }
  const existing = store.runs.get(plan.request_id);
  if (existing) {
    throw new InputError(
      `run "${plan.request_id}" already exists (status ${existing.status}): add --resume to continue it, or pick a new --run-id`,
      { field: '--run-id', value: plan.request_id },
    );
  }
  return execute(loaded, opts, store, out);
}

async function execute(loaded: LoadedPlan, opts: RunOptions, store: Store, out: Reporter): Promise<ExitCode> {
  const { config, prepared } = loaded;
  const changes = opts.resume ? resumeChanges(opts) : [];
  // Flags of a resume are checked as plan values before anything runs (a bad window, say).
  if (changes.length > 0) planWithChanges(prepared.plan, changes);
  describePlan(prepared, out);
  const execution: Execution = await openExecution({
    store,
    config,
    env: process.env,
    prepared,
    actor: actor(opts.operator),
    sandbox: config.sandbox,
    changes,
    reprocess: opts.reprocess ?? 'missing',
    onSanity: (report) => out.record('sanity-check', { ...report }, formatSanity(report)),
    onRetuned: (summary) => out.say(`Retuned run ${prepared.plan.request_id} for this resume: ${summary}`),
    onEvent: (e) => out.event(e),
    onNotice: (text) => out.say(text),
  });
  if (execution.status === 'done') {
    out.say(`Run ${execution.runId} already succeeded; nothing to resume (use --reprocess all to redo it).`);
    return EXIT.ok;
  }
  const { runner } = execution;
  // First Ctrl-C: finish the partition in flight. Second: roll it back now. Either way resumable.
  let interrupts = 0;
  const onSignal = (): void => {
    interrupts += 1;
    if (interrupts === 1) runner.requestStop('interrupted (Ctrl-C): finishing the partition in flight; press Ctrl-C again to roll it back');
    else runner.abortNow('interrupted twice: rolling back the partition in flight');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const outcome = await runner.run();
    // Whatever is still on its way to the notify targets gets a few seconds, never more.
    await execution.notifications?.drain();
    switch (outcome.status) {
      case 'succeeded':
        return EXIT.ok;
      case 'failed':
        // A partition refused by bad input (a job's SQL or data the job file must fix): exit 2.
        return outcome.badInput !== undefined ? EXIT.usage : EXIT.failed;
      case 'paused':
      case 'halted':
        out.say(`Resume with: run-backfill --resume --run-id ${outcome.runId}`);
        return EXIT.halted;
      case 'canary': {
        // Held on purpose: the operator reads the canary's comparison and decides.
        const canary = canaryEvidence(store, outcome.runId);
        if (canary)
          out.record('canary', { evidenceId: canary.id, ...(canary.body as CanaryBody) }, formatCanary(canary.body as CanaryBody));
        out.say(
          `Continue with: run-backfill --resume --run-id ${outcome.runId}   ·   or abandon it: run-backfill abandon --run-id ${outcome.runId}`,
        );
        return EXIT.halted;
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
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
