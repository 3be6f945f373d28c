// The local store (docs/design.md §7): one SQLite file, migrated on open, reached through repositories.
export { openStore, type Store, type StoreOptions } from './open.ts';
export { StoreError, type StoreErrorCode } from './errors.ts';
export { migrateDatabase, type MigrationOutcome } from './migrate.ts';
export { MIGRATIONS, LATEST_SCHEMA_VERSION, type Migration } from './migrations/index.ts';
export { PARTITION_TRANSITIONS, canTransition } from './transitions.ts';
export { canonicalJson, sha256Hex } from './json.ts';
export type { AuditInput, AuditQuery, AuditRepo } from './repos/audit.ts';
export type { EvidenceInput, EvidenceQuery, EvidenceRepo } from './repos/evidence.ts';
export type { HistoryFilter, HistoryRepo } from './repos/history.ts';
export type { JobInput, JobsRepo } from './repos/jobs.ts';
export type { PartitionPatch, PartitionsRepo } from './repos/partitions.ts';
export type { PlanInput, PlansRepo } from './repos/plans.ts';
export type { RunInput, RunQuery, RunsRepo, SetStatusOptions } from './repos/runs.ts';
export type { RunLeases } from './repos/leases.ts';
export {
  PARTITION_STATUSES,
  RUN_STATUSES,
  type AuditEntry,
  type Clock,
  type ColumnSums,
  type EvidenceRecord,
  type Job,
  type PartitionRecord,
  type PartitionStatus,
  type Plan,
  type Run,
  type RunKind,
  type RunSettings,
  type RunStatus,
} from './types.ts';
