import type Database from 'better-sqlite3';
import { canonicalJson, sha256Hex } from '../json.ts';
import { toEvidence, type EvidenceRow } from '../rows.ts';
import type { Clock, EvidenceRecord } from '../types.ts';
import type { AuditRepo } from './audit.ts';

export interface EvidenceInput {
  runId?: string | null;
  planHash?: string | null;
  /** What was captured, e.g. 'row-count-comparison', 'dry-run', 'source-health'. */
  kind: string;
  body: unknown;
  /** Who captured it; audited. Defaults to 'system'. */
  actor?: string;
}

export interface EvidenceQuery {
  runId?: string;
  planHash?: string;
  kind?: string;
}

export interface EvidenceRepo {
  add(input: EvidenceInput): EvidenceRecord;
  /** Oldest first. */
  list(query?: EvidenceQuery): EvidenceRecord[];
  latest(query: { planHash: string; kind: string }): EvidenceRecord | undefined;
  get(id: number): EvidenceRecord | undefined;
}

export function createEvidenceRepo(db: Database.Database, clock: Clock, audit: AuditRepo): EvidenceRepo {
  const statements = {
    insert: db.prepare<Record<string, unknown>, EvidenceRow>(`
      INSERT INTO evidence (run_id, plan_hash, kind, created_at, body_json, body_sha256)
      VALUES (@runId, @planHash, @kind, @now, @bodyJson, @bodySha256)
      RETURNING *`),
    list: db.prepare<{ runId: string | null; planHash: string | null; kind: string | null }, EvidenceRow>(`
      SELECT * FROM evidence
      WHERE (@runId IS NULL OR run_id = @runId)
        AND (@planHash IS NULL OR plan_hash = @planHash)
        AND (@kind IS NULL OR kind = @kind)
      ORDER BY id`),
    latest: db.prepare<{ planHash: string; kind: string }, EvidenceRow>(
      'SELECT * FROM evidence WHERE plan_hash = @planHash AND kind = @kind ORDER BY id DESC LIMIT 1',
    ),
    get: db.prepare<[number], EvidenceRow>('SELECT * FROM evidence WHERE id = ?'),
  };

  const add = db.transaction((input: EvidenceInput): EvidenceRecord => {
    // The hash is of the exact stored text, so anyone can recheck it with `sha256sum`.
    const bodyJson = canonicalJson(input.body, `evidence ${input.kind}`);
    const row = statements.insert.get({
      runId: input.runId ?? null,
      planHash: input.planHash ?? null,
      kind: input.kind,
      now: clock().toISOString(),
      bodyJson,
      bodySha256: sha256Hex(bodyJson),
    });
    if (row === undefined) throw new Error('INSERT … RETURNING gave no evidence row');
    audit.append({
      runId: row.run_id,
      entity: 'evidence',
      entityId: String(row.id),
      event: 'evidence.added',
      actor: input.actor ?? 'system',
      detail: { kind: row.kind, planHash: row.plan_hash, bodySha256: row.body_sha256 },
    });
    return toEvidence(row);
  });

  return {
    add: (input) => add.immediate(input),
    list: ({ runId, planHash, kind } = {}) =>
      statements.list.all({ runId: runId ?? null, planHash: planHash ?? null, kind: kind ?? null }).map(toEvidence),
    latest: (query) => {
      const row = statements.latest.get(query);
      return row === undefined ? undefined : toEvidence(row);
    },
    get: (id) => {
      const row = statements.get.get(id);
      return row === undefined ? undefined : toEvidence(row);
    },
  };
}
