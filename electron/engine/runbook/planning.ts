/**
 * Jobs, plans and the context of a run: what the runbook's steps need to act on one run.
 * Creating a plan in the app records the run at once (status `planned`), so every step's
 * evidence hangs off one run id from the start; its plan is immutable from then on.
 */
import { operatorName } from '../evidence/signoffRules.ts';
import type { JobSummary, PlanCreated, RunSummary } from '../../../shared/contractTypes.ts';
import { GateError, InputError } from '../../../shared/errors.ts';
import { jobSchema, planSchema, type Config, type Job, type Plan } from '../../../shared/schemas.ts';
import { jobHash } from '../plan/hash.ts';
import { findJobs, loadJob } from '../plan/load.ts';
import type { Run, Store } from '../store/index.ts';
import { preparePlan, recordRun, type PreparedPlan } from './prepare.ts';
import { ServiceError } from './secrets.ts';

export function jobSummary(job: Job): JobSummary {
  const t = job.target;
  return {
    name: job.name,
    description: job.description ?? null,
    unit: job.unit,
    timezone: job.timezone,
    writeMode: job.write_mode,
    target: t.kind === 's3' ? `s3 ${t.path} on ${t.connection}` : `${t.table} on ${t.connection}`,
    billing: job.classification.billing,
    externalPartner: job.classification.external_partner,
    downstream: job.classification.downstream,
    validationRules: job.validation.length,
    qualityRules: job.quality.length,
  };
}

export function listJobs(jobsDir: string, config: Config): { jobs: JobSummary[]; problems: string[] } {
  const jobs: JobSummary[] = [];
  const problems: string[] = [];
  for (const name of findJobs(jobsDir)) {
    try {
      jobs.push(jobSummary(loadJob(jobsDir, name, config).job));
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  return { jobs, problems };
}

export function createPlan(store: Store, jobsDir: string, config: Config, given: Plan, actor: string): PlanCreated {
  // Nobody named: the operator asked, as the CLI records it (its user name), never "–".
  const plan = given.requested_by?.trim() ? given : { ...given, requested_by: operatorName(actor) };
  const { job } = loadJob(jobsDir, plan.job, config);
  const prepared = preparePlan(job, plan, store);
  const existing = store.runs.get(plan.request_id);
  if (existing) {
    if (existing.planHash === prepared.planHash) return { runId: existing.runId, planHash: existing.planHash };
    throw new ServiceError(
      `request id "${plan.request_id}" is already a run (status ${existing.status}) with a different plan`,
      'conflict',
      'a signed plan never changes: pick a new request id, or open the existing run from History',
    );
  }
  recordRun(store, prepared, actor, config.sandbox);
  return { runId: plan.request_id, planHash: prepared.planHash };
}

export interface RunContext {
  run: Run;
  plan: Plan;
  job: Job;
  prepared: PreparedPlan;
  /** the job file changed since the run was planned: acting would mix two versions of the SQL */
  jobChanged: boolean;
}

/**
 * The run with its plan and the job version it was planned with. The job file is preferred;
 * when it is gone or changed, the stored definition of that version keeps the run viewable.
 */
export function runContext(store: Store, jobsDir: string, config: Config, runId: string): RunContext {
  const run = store.runs.get(runId);
  if (!run) throw new ServiceError(`no run "${runId}" in ${store.file}`, 'not-found', 'find it in History, or create a plan');
  const saved = store.plans.get(run.planHash);
  if (!saved) throw new ServiceError(`run "${runId}" has no plan on record`, 'not-found');
  const plan = planSchema.parse(saved.plan);
  let fromFile: Job | undefined;
  try {
    fromFile = loadJob(jobsDir, run.jobName, config).job;
  } catch {
    fromFile = undefined; // gone or broken: the stored version below keeps the run viewable
  }
  if (fromFile && jobHash(fromFile) === run.jobHash) {
    return { run, plan, job: fromFile, prepared: preparePlan(fromFile, plan, store), jobChanged: false };
  }
  const stored = store.jobs.get(run.jobName);
  const job = stored && stored.jobHash === run.jobHash ? jobSchema.parse(stored.definition) : fromFile;
  if (!job)
    throw new InputError(`job "${run.jobName}" of run ${runId} is not in ${jobsDir} and its version is not on record`, {
      field: 'job',
      value: run.jobName,
    });
  return { run, plan, job, prepared: preparePlan(job, plan, store), jobChanged: true };
}

/** The refusal to act on a run whose job changed since it was planned (the app's steps, and every execution). */
export function jobChanged(run: Run): GateError {
  return new GateError(`job "${run.jobName}" changed since run ${run.runId} was planned: acting now would mix two versions of the SQL`, [
    `the job file no longer matches the version run ${run.runId} was planned with (${run.jobHash.slice(0, 12)}…)`,
    'restore the job file, or create a new plan with a new request id',
  ]);
}

/** Refuses to act on a run whose job file changed since it was planned. */
export function assertJobUnchanged(ctx: RunContext): void {
  if (ctx.jobChanged) throw jobChanged(ctx.run);
}

export function runSummary(run: Run): RunSummary {
  return {
    runId: run.runId,
    jobName: run.jobName,
    planHash: run.planHash,
    status: run.status,
    tier: run.tier,
    rangeFrom: run.rangeFrom,
    rangeTo: run.rangeTo,
    unit: run.unit,
    partitionsTotal: run.partitionsTotal,
    partitionsPublished: run.partitionsPublished,
    partitionsFailed: run.partitionsFailed,
    rowsWritten: run.rowsWritten,
    requestedBy: run.requestedBy,
    executedBy: run.executedBy,
    haltReason: run.haltReason,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
  };
}
