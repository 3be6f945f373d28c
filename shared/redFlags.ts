// Red flags in a backfill plan (docs/design.md §1, source article 004). A `block` flag refuses the run
// (CLI exit code 4); a `warn` flag is shown and recorded but lets the run go ahead.
import { partitionFlags, summarizePartitionFlags, type PartitionFlagCode } from './partitionFlags.ts';
import { looksLikeBoundary, type Partition } from './partitions.ts';
import type { Job, Plan } from './schemas.ts';
import type { Tier } from './tier.ts';

export type RedFlagCode =
  | 'vague-range'
  | 'no-dry-run'
  | 'no-throttle'
  | 'no-stop-conditions'
  | 'duplicate-risk'
  | 'no-validation'
  | 'peak-overlap'
  | PartitionFlagCode;

export interface RedFlag {
  code: RedFlagCode;
  severity: 'block' | 'warn';
  message: string;
  field?: string;
  /** the partitions it concerns (the dry run's per-partition questions) */
  partitions?: string[];
}

export interface RedFlagInput {
  plan: Plan;
  job: Job;
  partitionCount: number;
  dryRunOnRecord: boolean;
  tier: Tier;
  /** with `now`: the questions that need no measuring (retention) are asked too */
  partitions?: readonly Partition[];
  now?: Date;
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

  if (input.partitions && input.now) {
    // Only the questions answered from the plan and the job alone: the dry run asks the rest.
    flags.push(...summarizePartitionFlags(partitionFlags({ tier, plan, job, partitions: input.partitions, now: input.now })));
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

/** Flags from several askers (the plan, the dry run, the gate), each once. */
export function mergeFlags(...lists: readonly (readonly RedFlag[])[]): RedFlag[] {
  const seen = new Set<string>();
  const out: RedFlag[] = [];
  for (const flag of lists.flat()) {
    const id = `${flag.code}|${flag.severity}|${flag.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(flag);
  }
  return out;
}

/**
 * The flags a lead signs: the plan's own (but no-dry-run: the dry run is what is signed) and the
 * dry run's answers to its questions, each once. A dry run recorded before the questions were
 * asked has none: the plan's early partition flags (retention) stand in for them.
 */
export function signedFlags(planFlags: readonly RedFlag[], dryRunBody: unknown): RedFlag[] {
  const answers = (dryRunBody as { redFlags?: RedFlag[] } | null | undefined)?.redFlags;
  const own = planFlags.filter((f) => f.code !== 'no-dry-run');
  return answers
    ? mergeFlags(
        own.filter((f) => !f.partitions),
        answers,
      )
    : own;
}
