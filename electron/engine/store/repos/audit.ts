import type Database from 'better-sqlite3';
import { entryHash, GENESIS_HASH, type ChainedEntry } from '../../evidence/chain.ts';
import { canonicalJson, parseJsonObject } from '../json.ts';
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
  /** Appends one entry, chained to the one before it (evidence/chain.ts) in the same transaction. */
  append(entry: AuditInput): AuditEntry;
  list(query?: AuditQuery): AuditEntry[];
  /** Entries with their chain hashes, seq from..to inclusive (whole log by default), in seq order. */
  chain(range?: { fromSeq?: number; toSeq?: number }): ChainedEntry[];
  /** The newest entry's seq and hash; undefined for an empty log. */
  head(): { seq: number; hash: string } | undefined;
}

interface ChainedRow extends AuditRow {
  prev_hash: string | null;
  hash: string | null;
}

export const toChainedEntry = (row: ChainedRow): ChainedEntry => ({
  ...toAuditEntry(row),
  prevHash: row.prev_hash ?? '',
  hash: row.hash ?? '',
});

/**
 * **Important**: an entry's hash covers its seq, so the seq is chosen here (one past the
 * largest ever used, as AUTOINCREMENT would) rather than left to SQLite, and head and insert
 * happen in one immediate transaction: two writers can never both chain to the same head.
 */
export function createAuditRepo(db: Database.Database, clock: Clock): AuditRepo {
  const statements = {
    insert: db.prepare<Record<string, unknown>, AuditRow>(`
      INSERT INTO audit_log (seq, at, run_id, entity, entity_id, event, from_status, to_status, actor, detail_json, prev_hash, hash)
      VALUES (@seq, @at, @runId, @entity, @entityId, @event, @fromStatus, @toStatus, @actor, @detailJson, @prevHash, @hash)
      RETURNING seq, at, run_id, entity, entity_id, event, from_status, to_status, actor, detail_json`),
    head: db.prepare<[], { seq: number; hash: string | null }>('SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1'),
    lastSeq: db.prepare<[], number>("SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'").pluck(),
    unchained: db.prepare<[], ChainedRow>('SELECT * FROM audit_log WHERE hash IS NULL ORDER BY seq'),
    hashBefore: db.prepare<[number], string | null>('SELECT hash FROM audit_log WHERE seq < ? ORDER BY seq DESC LIMIT 1').pluck(),
    seal: db.prepare<[string, string, number]>('UPDATE audit_log SET prev_hash = ?, hash = ? WHERE seq = ?'),
    chain: db.prepare<{ fromSeq: number; toSeq: number }, ChainedRow>(
      'SELECT * FROM audit_log WHERE seq BETWEEN @fromSeq AND @toSeq ORDER BY seq',
    ),
    listAll: db.prepare<{ afterSeq: number; limit: number }, AuditRow>(
      'SELECT * FROM audit_log WHERE seq > @afterSeq ORDER BY seq LIMIT @limit',
    ),
    listByRun: db.prepare<{ runId: string; afterSeq: number; limit: number }, AuditRow>(
      'SELECT * FROM audit_log WHERE run_id = @runId AND seq > @afterSeq ORDER BY seq LIMIT @limit',
    ),
  };

  /** Chains rows written before migration 002, oldest first; runs once per database. */
  const sealUnchained = (): void => {
    for (const row of statements.unchained.all()) {
      const prevHash = statements.hashBefore.get(row.seq) ?? GENESIS_HASH;
      const entry = toChainedEntry(row);
      statements.seal.run(prevHash, entryHash(prevHash, entry), row.seq);
    }
  };

  const append = db.transaction((entry: AuditInput): AuditEntry => {
    let head = statements.head.get();
    if (head !== undefined && head.hash === null) {
      sealUnchained();
      head = statements.head.get();
    }
    const prevHash = head?.hash ?? GENESIS_HASH;
    const detailJson = canonicalJson(entry.detail ?? {}, 'audit detail');
    const content = {
      seq: (statements.lastSeq.get() ?? 0) + 1,
      at: clock().toISOString(),
      runId: entry.runId ?? null,
      entity: entry.entity,
      entityId: entry.entityId,
      event: entry.event,
      fromStatus: entry.fromStatus ?? null,
      toStatus: entry.toStatus ?? null,
      actor: entry.actor,
      // Hashed as it will be read back (parsed from the stored text), so verifiers agree.
      detail: parseJsonObject(detailJson),
    };
    const row = statements.insert.get({ ...content, detailJson, prevHash, hash: entryHash(prevHash, content) });
    if (row === undefined) throw new Error('INSERT … RETURNING gave no audit row');
    return toAuditEntry(row);
  });

  return {
    // immediate: outside a transaction it takes the write lock before reading the head; inside
    // one (every repository's), better-sqlite3 makes it a savepoint.
    append: (entry) => append.immediate(entry),
    list({ runId, afterSeq = 0, limit = -1 } = {}) {
      // LIMIT -1 is SQLite for "no limit".
      const rows = runId === undefined ? statements.listAll.all({ afterSeq, limit }) : statements.listByRun.all({ runId, afterSeq, limit });
      return rows.map(toAuditEntry);
    },
    chain: ({ fromSeq = 1, toSeq = Number.MAX_SAFE_INTEGER } = {}) => statements.chain.all({ fromSeq, toSeq }).map(toChainedEntry),
    head() {
      const head = statements.head.get();
      return head === undefined ? undefined : { seq: head.seq, hash: head.hash ?? '' };
    },
  };
}
