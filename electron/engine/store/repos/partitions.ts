import type Database from 'better-sqlite3';
import { StoreError } from '../errors.ts';
import { canonicalJson } from '../json.ts';
import { toPartition, type PartitionRow } from '../rows.ts';
import { canTransition, PARTITION_TRANSITIONS } from '../transitions.ts';
import { PARTITION_STATUSES, type Clock, type ColumnSums, type PartitionRecord, type PartitionStatus } from '../types.ts';
import type { AuditRepo } from './audit.ts';

/** Results of an attempt. A field left undefined keeps its stored value. */
export interface PartitionPatch {
  rowsWritten?: number | null;
  sourceCount?: number | null;
  sourceSums?: ColumnSums | null;
  targetCount?: number | null;
  targetSums?: ColumnSums | null;
  checksum?: string | null;
  error?: string | null;
}

export interface PartitionsRepo {
  /** All partitions of a run, by seq. */
  list(runId: string): PartitionRecord[];
  /** Partitions of a run in one status, by seq. */
  listByStatus(runId: string, status: PartitionStatus): PartitionRecord[];
  get(runId: string, key: string): PartitionRecord | undefined;
  countByStatus(runId: string): Record<PartitionStatus, number>;
  /**
   * Moves a partition along PARTITION_TRANSITIONS, writes its audit row and refreshes the
   * run's counters, all in one transaction. Throws StoreError 'transition' otherwise.
   */
  transition(
    runId: string,
    key: string,
    to: PartitionStatus,
    patch: PartitionPatch,
    actor: string,
    detail?: Record<string, unknown>,
  ): PartitionRecord;
}

const sumsJson = (sums: ColumnSums | null, what: string) => (sums === null ? null : canonicalJson(sums, what));

export function createPartitionsRepo(
  db: Database.Database,
  clock: Clock,
  audit: AuditRepo,
  refreshCounters: (runId: string) => boolean,
): PartitionsRepo {
  const statements = {
    list: db.prepare<[string], PartitionRow>('SELECT * FROM partitions WHERE run_id = ? ORDER BY seq'),
    listByStatus: db.prepare<[string, string], PartitionRow>('SELECT * FROM partitions WHERE run_id = ? AND status = ? ORDER BY seq'),
    get: db.prepare<[string, string], PartitionRow>('SELECT * FROM partitions WHERE run_id = ? AND partition_key = ?'),
    countByStatus: db.prepare<[string], { status: string; n: number }>(
      'SELECT status, count(*) AS n FROM partitions WHERE run_id = ? GROUP BY status',
    ),
    update: db.prepare<PartitionRow, PartitionRow>(`
      UPDATE partitions SET
        status = @status, rows_written = @rows_written, source_count = @source_count,
        source_sums_json = @source_sums_json, target_count = @target_count,
        target_sums_json = @target_sums_json, checksum = @checksum, attempt = @attempt,
        error = @error, started_at = @started_at, finished_at = @finished_at, duration_ms = @duration_ms
      WHERE run_id = @run_id AND partition_key = @partition_key
      RETURNING *`),
  };

  const transition = db.transaction(
    (runId: string, key: string, to: PartitionStatus, patch: PartitionPatch, actor: string, detail?: Record<string, unknown>) => {
      const before = statements.get.get(runId, key);
      if (before === undefined) throw new StoreError(`partition ${key} of run ${runId} does not exist`, 'not-found');
      const from = before.status as PartitionStatus;
      if (!canTransition(from, to)) {
        const allowed = PARTITION_TRANSITIONS[from].join(', ');
        throw new StoreError(
          `partition ${key} of run ${runId} cannot go from ${from} to ${to} (from ${from} it may go to: ${allowed})`,
          'transition',
        );
      }
      const now = clock();
      const next: PartitionRow = { ...before, status: to };
      if (to === 'running') {
        // A new attempt: the previous attempt's results stay in the audit log, not on the row.
        Object.assign(next, {
          attempt: before.attempt + 1,
          started_at: now.toISOString(),
          finished_at: null,
          duration_ms: null,
          error: null,
          rows_written: null,
          source_count: null,
          source_sums_json: null,
          target_count: null,
          target_sums_json: null,
          checksum: null,
        });
      }
      if (patch.rowsWritten !== undefined) next.rows_written = patch.rowsWritten;
      if (patch.sourceCount !== undefined) next.source_count = patch.sourceCount;
      if (patch.sourceSums !== undefined) next.source_sums_json = sumsJson(patch.sourceSums, 'sourceSums');
      if (patch.targetCount !== undefined) next.target_count = patch.targetCount;
      if (patch.targetSums !== undefined) next.target_sums_json = sumsJson(patch.targetSums, 'targetSums');
      if (patch.checksum !== undefined) next.checksum = patch.checksum;
      if (patch.error !== undefined) next.error = patch.error;
      if (to === 'published' || to === 'failed') {
        next.finished_at = now.toISOString();
        next.duration_ms = next.started_at === null ? null : Math.max(0, now.getTime() - Date.parse(next.started_at));
      }
      const row = statements.update.get(next);
      if (row === undefined) throw new Error(`partition ${key} of run ${runId} vanished while updating`);
      const recordedPatch = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
      audit.append({
        runId,
        entity: 'partition',
        entityId: key,
        event: `partition.${to}`,
        fromStatus: from,
        toStatus: to,
        actor,
        detail: { attempt: row.attempt, ...recordedPatch, ...detail },
      });
      refreshCounters(runId);
      return toPartition(row);
    },
  );

  return {
    list: (runId) => statements.list.all(runId).map(toPartition),
    listByStatus: (runId, status) => statements.listByStatus.all(runId, status).map(toPartition),
    get: (runId, key) => {
      const row = statements.get.get(runId, key);
      return row === undefined ? undefined : toPartition(row);
    },
    countByStatus: (runId) => {
      const counts = Object.fromEntries(PARTITION_STATUSES.map((status) => [status, 0])) as Record<PartitionStatus, number>;
      for (const { status, n } of statements.countByStatus.all(runId)) counts[status as PartitionStatus] = n;
      return counts;
    },
    transition: (runId, key, to, patch, actor, detail) => transition.immediate(runId, key, to, patch, actor, detail),
  };
}
