// Red flags in a backfill plan (docs/design.md §1, source article 004). A `block` flag refuses the run
// (CLI exit code 4); a `warn` flag is shown and recorded but lets the run go ahead.
import { looksLikeBoundary } from './partitions.ts';
import type { Job, Plan } from './schemas.ts';
import type { Tier } from './tier.ts';

export type RedFlagCode = 'vague-range' | 'no-dry-run' | 'no-throttle' | 'no-stop-conditions' | 'duplicate-risk' | 'no-validation';

export interface RedFlag {
  code: RedFlagCode;
  severity: 'block' | 'warn';
  message: string;
  field?: string;
}

export interface RedFlagInput {
  plan: Plan;
  job: Job;
  partitionCount: number;
  dryRunOnRecord: boolean;
  tier: Tier;
}

/** Above this many partitions a run without a pause between them needs a second look. */
export const UNTHROTTLED_PARTITIONS = 24;

export function redFlags(input: RedFlagInput): RedFlag[] {
  const { plan, job, partitionCount, dryRunOnRecord, tier } = input;
  const strict = tier === 'manual' ? 'block' : 'warn';
  const flags: RedFlag[] = [];

  for (const side of ['from', 'to'] as const) {
    const value = plan.range[side];
    if (value.trim() === '') {
      flags.push({
        code: 'vague-range',
        severity: 'block',
        field: `range.${side}`,
        message: `range.${side} is empty: give an absolute date like 2026-05-01`,
      });
    } else if (!looksLikeBoundary(value)) {
      flags.push({
        code: 'vague-range',
        severity: 'block',
        field: `range.${side}`,
        message: `range.${side} ${JSON.stringify(value)} is not an absolute date: write YYYY-MM-DD, YYYY-MM or YYYY-MM-DDTHH (to is exclusive)`,
      });
    }
  }

  if (!dryRunOnRecord) {
    flags.push({
      code: 'no-dry-run',
      severity: strict,
      message: 'no dry run on record for this exact plan (same range, mode and throttle): run the same command with --dry-run first',
    });
  }

  const { sleep_ms, concurrency, duty_cycle } = plan.throttle;
  // A duty cycle below 1 is a pause between partitions too, in proportion to their duration.
  const paced = duty_cycle !== undefined && duty_cycle < 1;
  if (paced) {
    // paced: no flag
  } else if (sleep_ms === 0 && concurrency > 1) {
    flags.push({
      code: 'no-throttle',
      severity: 'warn',
      field: 'throttle.sleep_ms',
      message: `no throttle: ${concurrency} partitions at a time with no pause between them: set throttle.sleep_ms (--sleep-ms)`,
    });
  } else if (sleep_ms === 0 && partitionCount > UNTHROTTLED_PARTITIONS) {
    flags.push({
      code: 'no-throttle',
      severity: 'warn',
      field: 'throttle.sleep_ms',
      message: `no throttle: ${partitionCount} partitions with no pause between them: set throttle.sleep_ms (--sleep-ms)`,
    });
  }

  const stop = plan.stop;
  const watched = [
    stop.max_replication_lag_s,
    stop.critical_replication_lag_s,
    stop.max_lock_wait_ms,
    stop.critical_lock_wait_ms,
    stop.max_row_diff_ratio,
  ];
  if (watched.every((level) => level === undefined) && stop.probes.length === 0) {
    flags.push({
      code: 'no-stop-conditions',
      severity: 'warn',
      field: 'stop',
      message: 'no stop conditions: set stop.max_replication_lag_s, stop.max_lock_wait_ms or stop.max_row_diff_ratio',
    });
  }

  if ((plan.write_mode === 'upsert' || plan.write_mode === 'append-dedupe') && job.target.kind !== 's3' && job.target.key.length === 0) {
    flags.push({
      code: 'duplicate-risk',
      severity: 'block',
      field: 'target.key',
      message: `${plan.write_mode} without a key can duplicate rows: set target.key in the job`,
    });
  }

  if (job.validation.length === 0) {
    flags.push({
      code: 'no-validation',
      severity: strict,
      field: 'validation',
      message: 'the job has no validation rules: add one comparing source and target counts or sums',
    });
  }
  return flags;
}

export function blocking(flags: RedFlag[]): RedFlag[] {
  return flags.filter((flag) => flag.severity === 'block');
}
