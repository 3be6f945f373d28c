import type Database from 'better-sqlite3';
import { canonicalJson } from '../json.ts';
import { toAuditEntry, type AuditRow } from '../rows.ts';
import type { AuditEntry, Clock } from '../types.ts';

export interface AuditInput {
  runId?: string | null;
  entity: string;
  entityId: string;
  event: string;
  fromStatus?: string | null;
  toStatus?: string | null;
  actor: string;
  detail?: Record<string, unknown>;
}

export interface AuditQuery {
  runId?: string;
  /** Only entries after this seq: lets a view fetch what is new since its last refresh. */
  afterSeq?: number;
  limit?: number;
}

export interface AuditRepo {
  append(entry: AuditInput): AuditEntry;
  list(query?: AuditQuery): AuditEntry[];
}

export function createAuditRepo(db: Database.Database, clock: Clock): AuditRepo {
  const statements = {
    insert: db.prepare<Record<string, unknown>, AuditRow>(`
      INSERT INTO audit_log (at, run_id, entity, entity_id, event, from_status, to_status, actor, detail_json)
      VALUES (@at, @runId, @entity, @entityId, @event, @fromStatus, @toStatus, @actor, @detailJson)
      RETURNING *`),
    listAll: db.prepare<{ afterSeq: number; limit: number }, AuditRow>(
      'SELECT * FROM audit_log WHERE seq > @afterSeq ORDER BY seq LIMIT @limit',
    ),
    listByRun: db.prepare<{ runId: string; afterSeq: number; limit: number }, AuditRow>(
      'SELECT * FROM audit_log WHERE run_id = @runId AND seq > @afterSeq ORDER BY seq LIMIT @limit',
    ),
  };

  return {
    append(entry) {
      const row = statements.insert.get({
        at: clock().toISOString(),
        runId: entry.runId ?? null,
        entity: entry.entity,
        entityId: entry.entityId,
        event: entry.event,
        fromStatus: entry.fromStatus ?? null,
        toStatus: entry.toStatus ?? null,
        actor: entry.actor,
        detailJson: canonicalJson(entry.detail ?? {}, 'audit detail'),
      });
      if (row === undefined) throw new Error('INSERT … RETURNING gave no audit row');
      return toAuditEntry(row);
    },
    list({ runId, afterSeq = 0, limit = -1 } = {}) {
      // LIMIT -1 is SQLite for "no limit".
      const rows =
        runId === undefined
          ? statements.listAll.all({ afterSeq, limit })
          : statements.listByRun.all({ runId, afterSeq, limit });
      return rows.map(toAuditEntry);
    },
  };
}
