/**
 * The one way to build an executor for a run — the CLI and the app both come here, so a run
 * gets the same stop conditions and failure limits whoever starts it.
 */
import type { Config, Job, Plan } from '../../../shared/schemas.ts';
import type { ExecutorEvent } from '../executor/events.ts';
import { Runner, type Reprocess } from '../executor/runner.ts';
import type { PartitionTarget } from '../executor/types.ts';
import { StopConditions, expectedRowsFrom } from '../safety/stopConditions.ts';
import type { Store } from '../store/index.ts';
import { backfillApplicationName } from '../targets/postgres/partitionTarget.ts';
import { planHash } from '../plan/hash.ts';

export interface RunnerSetup {
  store: Store;
  config: Config;
  job: Job;
  plan: Plan;
  target: PartitionTarget;
  actor: string;
  reprocess?: Reprocess;
  onEvent?: (event: ExecutorEvent) => void;
  env?: NodeJS.ProcessEnv;
}

export function createRunner(s: RunnerSetup): Runner {
  const dryRun = s.store.evidence.latest({ planHash: planHash(s.plan), kind: 'dry-run' });
  const monitor = new StopConditions({
    plan: s.plan,
    config: s.config,
    targetConnection: s.job.target.connection,
    applicationName: backfillApplicationName(s.job.name),
    timeZone: s.job.timezone,
    expectedRows: expectedRowsFrom(dryRun?.body),
    env: s.env,
  });
  return new Runner({
    store: s.store,
    runId: s.plan.request_id,
    target: s.target,
    actor: s.actor,
    reprocess: s.reprocess,
    maxConsecutiveFailures: s.plan.stop.max_consecutive_failures,
    monitor,
    onEvent: s.onEvent,
  });
}

/**
 * The plan's max_lock_wait_ms also bounds the target sessions' lock_timeout: the executor never
 * waits in a lock queue longer than the plan allows (where it would block readers behind it).
 */
export function configForPlan(config: Config, job: Job, plan: Plan): Config {
  const max = plan.stop.max_lock_wait_ms;
  const target = config.connections[job.target.connection];
  if (max === undefined || target?.kind !== 'postgres' || target.lock_timeout_ms <= max) return config;
  return { ...config, connections: { ...config.connections, [job.target.connection]: { ...target, lock_timeout_ms: max } } };
}
