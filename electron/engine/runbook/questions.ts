/**
 * The dry run's questions (source article 004), asked of the world: what each partition would
 * write and what it holds now (with the time each read took), which partitions are closed, who
 * last published each one and with which job version, how long the run would take. The pure
 * rules in shared/partitionFlags.ts judge the answers. The dry run and the execution gate both
 * come here, so what the dry run shows is what the gate refuses.
 */
import {
  partitionFlags,
  peakOverlapFlag,
  summarizePartitionFlags,
  type MeasuredPartition,
  type PartitionFlag,
} from '../../../shared/partitionFlags.ts';
import type { Partition } from '../../../shared/partitions.ts';
import type { RedFlag } from '../../../shared/redFlags.ts';
import { runEstimate, type RunEstimate } from '../../../shared/runEstimate.ts';
import type { Config, Plan } from '../../../shared/schemas.ts';
import type { DryRunRow, Measures, PartitionTarget } from '../executor/types.ts';
import type { Store } from '../store/index.ts';
import { closedPartitions } from './closedPartitions.ts';
import type { PreparedPlan } from './prepare.ts';

/** A dry run's row with the time its read took. */
export interface TimedDryRunRow extends DryRunRow {
  ms: number;
}

export interface Answers {
  /** every flag of every partition asked about */
  partitions: PartitionFlag[];
  /** the same, one per question, and the run-level ones (peak overlap) */
  flags: RedFlag[];
  estimate: RunEstimate | null;
}

const num = (v: Measures[string] | undefined): number | null => (v === null || v === undefined || v === '' ? null : Number(v));

/** Rows a partition would write and holds now: `rows` on Postgres, `records` on S3. */
export function measuredOf(row: DryRunRow): MeasuredPartition {
  return {
    key: row.partition.key,
    sourceRows: num(row.source.rows ?? row.source.records),
    targetRows: num(row.target.rows ?? row.target.records),
  };
}

/** Measures partitions read-only, timing each read (the estimate stands on these timings). */
export async function measureTimed(
  target: PartitionTarget,
  partitions: readonly Partition[],
  onRow?: (row: TimedDryRunRow, index: number) => void,
): Promise<TimedDryRunRow[]> {
  const rows: TimedDryRunRow[] = [];
  for (const [index, partition] of partitions.entries()) {
    const started = performance.now();
    const row = { ...(await target.measure(partition)), ms: Math.round(performance.now() - started) };
    rows.push(row);
    onRow?.(row, index);
  }
  return rows;
}

/** partition key → the run that last published it, and that run's job version (when the ledger knows the run). */
export async function publishedBy(
  target: PartitionTarget,
  store: Store,
  keys: readonly string[],
): Promise<Map<string, { runId: string; jobHash: string | null }>> {
  const marks = await target.readMarks(keys);
  const out = new Map<string, { runId: string; jobHash: string | null }>();
  for (const [key, mark] of marks) out.set(key, { runId: mark.runId, jobHash: store.runs.get(mark.runId)?.jobHash ?? null });
  return out;
}

export interface QuestionInput {
  prepared: PreparedPlan;
  config: Config;
  env: NodeJS.ProcessEnv;
  store: Store;
  /** prepared by the caller, still open */
  target: PartitionTarget;
  /** the partitions asked about (all of the plan's, or those still to write), in order */
  partitions: readonly Partition[];
  /** their measures, where a dry run took them; the size and source questions need them */
  rows: readonly TimedDryRunRow[];
  now: Date;
  /** the plan as it will execute, its throttle and window retuned on a resume (default: the signed plan) */
  executed?: Plan;
}

export async function answerQuestions(input: QuestionInput): Promise<Answers> {
  const { prepared, rows, now, partitions } = input;
  const { plan, job, tier } = prepared;
  const closed = await closedPartitions(job, input.config, input.env, partitions);
  const by = await publishedBy(
    input.target,
    input.store,
    partitions.map((p) => p.key),
  );
  const flags = partitionFlags({
    tier,
    plan,
    job,
    partitions,
    measured: rows.map(measuredOf),
    closed,
    publishedBy: by,
    jobHash: prepared.jobHash,
    now,
  });
  // Only a run measured whole can be timed.
  const estimate =
    rows.length === 0 || rows.length < partitions.length
      ? null
      : runEstimate({
          partitionReadMs: rows.map((r) => r.ms),
          sleepMs: (input.executed ?? plan).throttle.sleep_ms,
          concurrency: (input.executed ?? plan).throttle.concurrency,
          window: (input.executed ?? plan).stop.no_run_window,
          timeZone: job.timezone,
          start: now,
        });
  const peak = peakOverlapFlag(estimate, plan, tier, job.timezone);
  return { partitions: flags, flags: [...summarizePartitionFlags(flags), ...(peak ? [peak] : [])], estimate };
}
