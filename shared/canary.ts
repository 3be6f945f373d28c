/**
 * The canary (source article 003: "작은 범위로 canary backfill을 먼저 실행하고 결과를 비교"): the
 * first partitions of a run are written, reconciled and compared with what they held before,
 * and the run waits in `canary` until the operator continues or abandons it.
 */
import type { KeyChange } from './keyChange.ts';
import type { Plan } from './schemas.ts';
import type { Tier } from './tier.ts';

/** Partitions a manual-tier plan runs first when it says nothing. */
export const DEFAULT_CANARY = 1;

/** How many partitions the canary runs: the plan's `canary`, else 1 for the manual tier; none when that is the whole range. */
export function canarySize(plan: Pick<Plan, 'canary'>, tier: Tier, partitionCount: number): number {
  const asked = plan.canary ?? (tier === 'manual' ? DEFAULT_CANARY : 0);
  return asked > 0 && asked < partitionCount ? asked : 0;
}

export type CanaryMeasures = Record<string, string | number | null>;

/** One canary partition: what it held before the run and what it holds now. */
export interface CanaryPartition {
  key: string;
  /** what "before" is: the run's snapshot of the partition, or the target as the dry run measured it */
  basis: 'snapshot' | 'dry run' | 'nothing on record';
  /** rows and sums before (null when nothing was on record) */
  before: CanaryMeasures | null;
  after: CanaryMeasures;
  /** rows added, removed and changed by key, against the snapshot (Postgres targets with a snapshot) */
  keys?: KeyChange;
}

export interface CanaryBody {
  runId: string;
  size: number;
  partitions: CanaryPartition[];
  /** the canary's partitions reconciled with the source */
  reconciled: boolean;
}
