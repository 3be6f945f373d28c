/**
 * From a job, a plan and the connections to everything the executor needs — and the gates
 * that run before it: partitions, automation tier, red flags, plan hash. The CLI and the app
 * both come through here, so neither is a side door.
 */
import type { Partition } from '../../../shared/partitions.ts';
import { describeRange, partitionRange, rangeDays } from '../../../shared/partitions.ts';
import type { RedFlag } from '../../../shared/redFlags.ts';
import { redFlags } from '../../../shared/redFlags.ts';
import { planListProblem } from '../../../shared/partitionFlags.ts';
import type { Config, Job, Plan, WriteMode } from '../../../shared/schemas.ts';
import { isPostgresJob } from '../../../shared/schemas.ts';
import type { Tier } from '../../../shared/tier.ts';
import { automationTier } from '../../../shared/tier.ts';
import { InputError } from '../../../shared/errors.ts';
import { jobHash, planHash } from '../plan/hash.ts';
import type { Store } from '../store/index.ts';
import { idempotencyProven } from '../safety/idempotency.ts';
import type { PartitionTarget } from '../executor/types.ts';
import { PostgresPartitionTarget, type PostgresEndpoint } from '../targets/postgres/partitionTarget.ts';
import { involvesS3, openS3Target } from '../targets/s3/open.ts';

export interface PreparedPlan {
  plan: Plan;
  planHash: string;
  job: Job;
  jobHash: string;
  partitions: Partition[];
  tier: Tier;
  tierReasons: string[];
  flags: RedFlag[];
  /** "61 daily partitions, 2026-05-01 to 2026-06-30 inclusive" */
  summary: string;
}

export function preparePlan(job: Job, plan: Plan, store: Store): PreparedPlan {
  if (plan.job !== job.name)
    throw new InputError(`the plan is for job "${plan.job}" but job "${job.name}" was loaded`, { field: 'job', value: plan.job });
  if (plan.unit && plan.unit !== job.unit) {
    throw new InputError(`unit ${plan.unit} contradicts the job's unit ${job.unit}: partitions must match the target's partitioning`, {
      field: 'unit',
      value: plan.unit,
      hint: `use --unit ${job.unit} or leave it out`,
    });
  }
  const partitions = partitionRange(plan.range, job.unit, job.timezone);
  const hash = planHash(plan);
  const days = rangeDays(partitions);
  const { tier, reasons } = automationTier({
    billing: job.classification.billing,
    externalPartner: job.classification.external_partner,
    downstream: job.classification.downstream,
    rangeDays: days,
    idempotencyProven: idempotencyProven(store, job, plan.write_mode),
  });
  const dryRunOnRecord = store.evidence.latest({ planHash: hash, kind: 'dry-run' }) !== undefined;
  const listProblem = planListProblem(plan, partitions);
  if (listProblem)
    throw new InputError(
      `${listProblem.field} names partition ${listProblem.value}, which is not in the range ${describeRange(partitions, job.unit)}`,
      {
        field: listProblem.field,
        value: listProblem.value,
        hint: `use partition keys of the range, as the dry run lists them (e.g. ${partitions[0]?.key ?? '2026-05-01'})`,
      },
    );
  const flags = redFlags({ plan, job, partitionCount: partitions.length, dryRunOnRecord, tier, partitions, now: new Date() });
  return {
    plan,
    planHash: hash,
    job,
    jobHash: jobHash(job),
    partitions,
    tier,
    tierReasons: reasons,
    flags,
    summary: describeRange(partitions, job.unit),
  };
}

/** Opens the job's target with its source, secrets taken from the environment (never from files). */
export function openTarget(
  config: Config,
  job: Job,
  writeMode: WriteMode,
  env: NodeJS.ProcessEnv = process.env,
  store?: Store,
): PartitionTarget {
  // S3 on either side: the S3 adapter picks the target class (its ledger lives in `store`).
  if (involvesS3(config, job) || !isPostgresJob(job))
    return openS3Target(config, job, writeMode, { env, store, postgres: (name, field) => postgresEndpoint(config, name, field, env) });
  const source = postgresEndpoint(config, job.source.connection, 'source.connection', env);
  const target = postgresEndpoint(config, job.target.connection, 'target.connection', env);
  return new PostgresPartitionTarget({ job, writeMode, source, target });
}

/** A Postgres connection of the config with its password from the environment. */
export function postgresEndpoint(config: Config, name: string, field: string, env: NodeJS.ProcessEnv = process.env): PostgresEndpoint {
  const connection = config.connections[name];
  if (!connection) {
    throw new InputError(`connection "${name}" is not in the config (known: ${Object.keys(config.connections).join(', ') || 'none'})`, {
      field,
      value: name,
    });
  }
  if (connection.kind !== 'postgres') {
    throw new InputError(`connection "${name}" is of kind ${connection.kind}; this build runs Postgres sources and targets only`, {
      field,
      value: name,
    });
  }
  let password: string | undefined;
  if (connection.password_env) {
    password = env[connection.password_env];
    if (password === undefined) {
      throw new InputError(
        `connection "${name}" takes its password from the environment variable ${connection.password_env}, which is not set`,
        {
          field: `connections.${name}.password_env`,
          value: connection.password_env,
          hint: `export ${connection.password_env}=… before running`,
        },
      );
    }
  }
  return { name, connection, password };
}

/**
 * Records a prepared plan as a new run in the ledger — its job version, its plan and its
 * partitions (all pending) — in one transaction. The CLI and the app both create runs here.
 */
/** `sandbox`: the workspace is the Sandbox (its config says `sandbox: true`); kept on the run for its notes. */
export function recordRun(store: Store, prepared: PreparedPlan, actor: string, sandbox = false): void {
  const { job, plan } = prepared;
  store.transaction(() => {
    store.jobs.upsert({ name: job.name, jobHash: prepared.jobHash, definition: job, sourceFile: null, actor });
    store.plans.save({ planHash: prepared.planHash, requestId: plan.request_id, jobName: job.name, plan, actor });
    store.runs.create({
      runId: plan.request_id,
      jobName: job.name,
      planHash: prepared.planHash,
      jobHash: prepared.jobHash,
      kind: 'execute',
      rangeFrom: plan.range.from,
      rangeTo: plan.range.to,
      unit: job.unit,
      timezone: job.timezone,
      writeMode: plan.write_mode,
      tier: prepared.tier,
      requestedBy: plan.requested_by ?? null,
      executedBy: actor,
      settings: {
        sleepMs: plan.throttle.sleep_ms,
        concurrency: plan.throttle.concurrency,
        ...(plan.throttle.duty_cycle !== undefined ? { dutyCycle: plan.throttle.duty_cycle } : {}),
        ...(sandbox ? { sandbox: true } : {}),
      },
      partitions: prepared.partitions,
      actor,
    });
  });
}
