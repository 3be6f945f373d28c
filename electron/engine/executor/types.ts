import type { Partition } from '../../../shared/partitions.ts';
import type { WriteMode } from '../../../shared/schemas.ts';
import type { KeyChange } from '../../../shared/keyChange.ts';

/** Counts and sums of one side of a partition: `{ rows: 120, paid_amount: "4410.50" }`. */
export type Measures = Record<string, string | number | null>;

/** What the target holds as proof that a partition was published (docs/design.md §6 step 4). */
export interface PartitionMark {
  partitionKey: string;
  runId: string;
  planHash: string;
  attempt: number;
  rowsWritten: number;
  checksum: string;
  publishedAt: string;
}

/** One validation rule's outcome for one partition. */
export interface RuleCheck {
  rule: string;
  source: Measures;
  target: Measures;
  /** Largest relative difference over the columns both sides return. */
  diffRatio: number;
  tolerance: number;
  ok: boolean;
}

export interface PartitionWriteResult {
  rowsWritten: number;
  sourceCount: number | null;
  sourceSums: Measures;
  targetCount: number;
  targetSums: Measures;
  checksum: string;
  checks: RuleCheck[];
  duplicateKeys: number;
}

export interface DryRunRow {
  partition: Partition;
  source: Measures;
  target: Measures;
  /** Row and sum changes the run would make, target after minus target now (overwrite mode). */
  change: Measures;
  /** What the run would change at the grain of the target's key, where the target can tell (Postgres). */
  keys?: KeyChange;
}

export interface ReconcileRow {
  partition: Partition;
  checks: RuleCheck[];
  targetCount: number;
  markedRows: number | null;
  markRunId: string | null;
  /** duplicate keys in the target partition now (0 where a unique index makes them impossible) */
  duplicateKeys?: number;
  ok: boolean;
  problems: string[];
}

export interface WriteContext {
  runId: string;
  planHash: string;
  attempt: number;
  writeMode: WriteMode;
  /** Aborted when the operator asks to stop now: the partition in flight is rolled back. */
  signal: AbortSignal;
  /**
   * Called after validation and before COMMIT, so the local ledger says `validated` before
   * the target publishes. If it throws (local disk full), the partition is rolled back.
   */
  onValidated(result: PartitionWriteResult): void;
}

export interface KeyChangeOptions {
  /** changed keys kept with their rows before → after (default 20 per partition) */
  sampleLimit?: number;
  /** values kept per mover column (default 20 per partition) */
  topMovers?: number;
  /** Across servers: hex digits of the first level's key-hash ranges (default 2: 256 ranges) and the rows a range holds before its rows' digests are read (default 2000). For tests and tuning. */
  bisection?: { firstLen?: number; leafRows?: number };
}

/**
 * A place partitions are written to. The executor (runner.ts) owns the ledger, retries,
 * throttle and stop; a target owns the atomic publish of ONE partition: write, validate,
 * mark and commit, or roll back and throw. Postgres lives in targets/postgres; S3 joins later.
 */
export interface PartitionTarget {
  /** Human name for messages, e.g. `mart.mart_order_daily on warehouse`. */
  readonly label: string;
  /** Resolve names against the catalog, create the marker table where allowed. */
  prepare(): Promise<void>;
  /** The target's own record of published partitions (the truth on resume). */
  readMarks(keys: readonly string[]): Promise<Map<string, PartitionMark>>;
  writePartition(partition: Partition, ctx: WriteContext): Promise<PartitionWriteResult>;
  /** Read-only: what the source would write and what the target holds now. */
  measure(partition: Partition): Promise<DryRunRow>;
  /** Read-only: source vs target for a published partition, after the fact. */
  reconcile(partition: Partition): Promise<ReconcileRow>;
  /**
   * Read-only: what writing the partition would change, by key — rows added, removed and
   * changed, per-column counts, sums moved and a bounded sample, measured in the database.
   * Absent where the target cannot measure it (S3).
   */
  changeByKey?(partition: Partition, options?: KeyChangeOptions): Promise<KeyChange>;
  /** Read-only: the partition now against the run's snapshot of it (canary, row-count comparison). */
  changeSinceSnapshot?(partition: Partition, runId: string, options?: KeyChangeOptions): Promise<KeyChange>;
  /** Transient errors (connection reset, lock timeout, deadlock…) are retried; others fail the partition. */
  isTransient(err: unknown): boolean;
  /** The error was a lock wait that ran out (lock_timeout): retried, then the run halts. */
  isLockWait(err: unknown): boolean;
  close(): Promise<void>;
}
