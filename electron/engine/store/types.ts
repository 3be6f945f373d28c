/**
 * Domain types the store hands out: camelCase, JSON already parsed. The snake_case shapes
 * straight from SQLite live in rows.ts and never leave the store.
 */

/** `canary`: held after its first partitions until the operator continues or abandons it; `abandoned`: for good. */
export const RUN_STATUSES = ['planned', 'running', 'paused', 'halted', 'canary', 'abandoned', 'failed', 'succeeded'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const PARTITION_STATUSES = ['pending', 'running', 'validated', 'published', 'failed', 'skipped'] as const;
export type PartitionStatus = (typeof PARTITION_STATUSES)[number];

export type RunKind = 'execute' | 'dry-run';

/** The live throttle an operator may retune while a run is going. */
export interface RunSettings {
  sleepMs?: number;
  concurrency?: number;
  /** the plan's throttle.duty_cycle, retuned: the share of wall time the executor works */
  dutyCycle?: number;
  /**
   * Stop-condition thresholds retuned since the plan was signed (plan field names, e.g.
   * max_replication_lag_s), laid over the plan's `stop` when the run executes.
   */
  stop?: Record<string, unknown>;
  /** run in the Sandbox workspace: training data; its notes say so */
  sandbox?: boolean;
}

/** Per-column sums as the target reports them; numerics arrive as strings to keep precision. */
export type ColumnSums = Record<string, string | number | null>;

export interface Job {
  name: string;
  jobHash: string;
  definition: unknown;
  sourceFile: string | null;
  updatedAt: string;
}

export interface Plan {
  planHash: string;
  requestId: string;
  jobName: string;
  plan: unknown;
  createdAt: string;
}

export interface Run {
  runId: string;
  jobName: string;
  planHash: string;
  jobHash: string;
  kind: RunKind;
  rangeFrom: string | null;
  rangeTo: string | null;
  unit: string | null;
  timezone: string | null;
  writeMode: string | null;
  tier: string | null;
  status: RunStatus;
  /** The first partition key (by seq) not yet published or skipped; null when none is left. */
  cursor: string | null;
  partitionsTotal: number;
  partitionsPublished: number;
  partitionsFailed: number;
  rowsWritten: number;
  requestedBy: string | null;
  executedBy: string | null;
  settings: RunSettings;
  haltReason: string | null;
  leaseOwner: string | null;
  leaseExpiresAt: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: string;
}

export interface PartitionRecord {
  runId: string;
  key: string;
  seq: number;
  startAt: string | null;
  endAt: string | null;
  status: PartitionStatus;
  rowsWritten: number | null;
  sourceCount: number | null;
  sourceSums: ColumnSums | null;
  targetCount: number | null;
  targetSums: ColumnSums | null;
  checksum: string | null;
  attempt: number;
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
}

export interface AuditEntry {
  seq: number;
  at: string;
  runId: string | null;
  entity: string;
  entityId: string;
  event: string;
  fromStatus: string | null;
  toStatus: string | null;
  actor: string;
  detail: Record<string, unknown>;
}

export interface EvidenceRecord {
  id: number;
  runId: string | null;
  planHash: string | null;
  kind: string;
  createdAt: string;
  body: unknown;
  /** sha256 (hex) of the stored JSON text, so a copy can be checked byte for byte. */
  bodySha256: string;
}

/** Where "now" comes from; tests pass a fixed clock. */
export type Clock = () => Date;
