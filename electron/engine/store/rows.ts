import { parseJson, parseJsonObject } from './json.ts';
import type {
  AuditEntry,
  ColumnSums,
  EvidenceRecord,
  Job,
  PartitionRecord,
  PartitionStatus,
  Plan,
  Run,
  RunKind,
  RunSettings,
  RunStatus,
} from './types.ts';

// Rows exactly as SQLite returns them (snake_case, JSON as text). Only the repositories see
// these; everything they return is mapped to the domain types in types.ts.

export interface JobRow {
  name: string;
  job_hash: string;
  definition_json: string;
  source_file: string | null;
  updated_at: string;
}

export interface PlanRow {
  plan_hash: string;
  request_id: string;
  job_name: string;
  plan_json: string;
  created_at: string;
}

export interface RunRow {
  run_id: string;
  job_name: string;
  plan_hash: string;
  job_hash: string;
  kind: string;
  range_from: string | null;
  range_to: string | null;
  unit: string | null;
  timezone: string | null;
  write_mode: string | null;
  tier: string | null;
  status: string;
  cursor: string | null;
  partitions_total: number;
  partitions_published: number;
  partitions_failed: number;
  rows_written: number;
  requested_by: string | null;
  executed_by: string | null;
  settings_json: string;
  halt_reason: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

export interface PartitionRow {
  run_id: string;
  partition_key: string;
  seq: number;
  start_at: string | null;
  end_at: string | null;
  status: string;
  rows_written: number | null;
  source_count: number | null;
  source_sums_json: string | null;
  target_count: number | null;
  target_sums_json: string | null;
  checksum: string | null;
  attempt: number;
  error: string | null;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
}

export interface AuditRow {
  seq: number;
  at: string;
  run_id: string | null;
  entity: string;
  entity_id: string;
  event: string;
  from_status: string | null;
  to_status: string | null;
  actor: string;
  detail_json: string;
}

export interface EvidenceRow {
  id: number;
  run_id: string | null;
  plan_hash: string | null;
  kind: string;
  created_at: string;
  body_json: string;
  body_sha256: string;
}

export const toJob = (row: JobRow): Job => ({
  name: row.name,
  jobHash: row.job_hash,
  definition: parseJson(row.definition_json),
  sourceFile: row.source_file,
  updatedAt: row.updated_at,
});

export const toPlan = (row: PlanRow): Plan => ({
  planHash: row.plan_hash,
  requestId: row.request_id,
  jobName: row.job_name,
  plan: parseJson(row.plan_json),
  createdAt: row.created_at,
});

/** Settings are stored snake_case (sleep_ms) like every other column name. */
export function settingsToJson(settings: RunSettings): string {
  const stored: Record<string, unknown> = {};
  if (settings.sleepMs !== undefined) stored.sleep_ms = settings.sleepMs;
  if (settings.concurrency !== undefined) stored.concurrency = settings.concurrency;
  if (settings.dutyCycle !== undefined) stored.duty_cycle = settings.dutyCycle;
  if (settings.sandbox === true) stored.sandbox = true;
  if (settings.stop !== undefined && Object.keys(settings.stop).length > 0) stored.stop = settings.stop;
  return JSON.stringify(stored);
}

export function settingsFromJson(text: string): RunSettings {
  const stored = parseJsonObject(text);
  const settings: RunSettings = {};
  if (typeof stored.sleep_ms === 'number') settings.sleepMs = stored.sleep_ms;
  if (typeof stored.concurrency === 'number') settings.concurrency = stored.concurrency;
  if (typeof stored.duty_cycle === 'number') settings.dutyCycle = stored.duty_cycle;
  if (stored.sandbox === true) settings.sandbox = true;
  if (typeof stored.stop === 'object' && stored.stop !== null && !Array.isArray(stored.stop))
    settings.stop = stored.stop as Record<string, unknown>;
  return settings;
}

export const toRun = (row: RunRow): Run => ({
  runId: row.run_id,
  jobName: row.job_name,
  planHash: row.plan_hash,
  jobHash: row.job_hash,
  // CHECK constraints in 001_initial guarantee these two.
  kind: row.kind as RunKind,
  rangeFrom: row.range_from,
  rangeTo: row.range_to,
  unit: row.unit,
  timezone: row.timezone,
  writeMode: row.write_mode,
  tier: row.tier,
  status: row.status as RunStatus,
  cursor: row.cursor,
  partitionsTotal: row.partitions_total,
  partitionsPublished: row.partitions_published,
  partitionsFailed: row.partitions_failed,
  rowsWritten: row.rows_written,
  requestedBy: row.requested_by,
  executedBy: row.executed_by,
  settings: settingsFromJson(row.settings_json),
  haltReason: row.halt_reason,
  leaseOwner: row.lease_owner,
  leaseExpiresAt: row.lease_expires_at,
  createdAt: row.created_at,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
  updatedAt: row.updated_at,
});

const sumsFrom = (text: string | null): ColumnSums | null => (text === null ? null : (parseJsonObject(text) as ColumnSums));

export const toPartition = (row: PartitionRow): PartitionRecord => ({
  runId: row.run_id,
  key: row.partition_key,
  seq: row.seq,
  startAt: row.start_at,
  endAt: row.end_at,
  status: row.status as PartitionStatus,
  rowsWritten: row.rows_written,
  sourceCount: row.source_count,
  sourceSums: sumsFrom(row.source_sums_json),
  targetCount: row.target_count,
  targetSums: sumsFrom(row.target_sums_json),
  checksum: row.checksum,
  attempt: row.attempt,
  error: row.error,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
  durationMs: row.duration_ms,
});

export const toAuditEntry = (row: AuditRow): AuditEntry => ({
  seq: row.seq,
  at: row.at,
  runId: row.run_id,
  entity: row.entity,
  entityId: row.entity_id,
  event: row.event,
  fromStatus: row.from_status,
  toStatus: row.to_status,
  actor: row.actor,
  detail: parseJsonObject(row.detail_json),
});

export const toEvidence = (row: EvidenceRow): EvidenceRecord => ({
  id: row.id,
  runId: row.run_id,
  planHash: row.plan_hash,
  kind: row.kind,
  createdAt: row.created_at,
  body: parseJson(row.body_json),
  bodySha256: row.body_sha256,
});
