/**
 * Sign-offs on record. Only signature files that verify on their own are kept (readSignatureFile);
 * whether one COUNTS for a run is decided at the gate (signoffRules.ts), against the keys
 * registered then — so a lead's signature may arrive before their key is registered.
 */
import type Database from 'better-sqlite3';
import type { AuditRepo } from '../store/repos/audit.ts';
import type { Clock } from '../store/types.ts';
import { sha256Hex } from './chain.ts';
import type { SignatureFile } from './signoff.ts';

export interface Signoff {
  id: number;
  planHash: string;
  requestId: string;
  impactHash: string;
  jobHash: string;
  signer: string;
  signerKey: string;
  signedAt: string;
  comment: string;
  /** The exact text that was signed. */
  statementJson: string;
  signature: string;
  publicKeyPem: string;
  importedAt: string;
  importedBy: string;
}

export interface SignoffsRepo {
  /** Keeps a verified signature file; the same file twice is a no-op (created: false). */
  record(file: SignatureFile, actor: string): { signoff: Signoff; created: boolean };
  forPlan(planHash: string): Signoff[];
  forRequest(requestId: string): Signoff[];
  list(): Signoff[];
}

interface SignoffRow {
  id: number;
  plan_hash: string;
  request_id: string;
  impact_hash: string;
  job_hash: string;
  signer: string;
  signer_key: string;
  signed_at: string;
  comment: string;
  statement_json: string;
  signature: string;
  public_key_pem: string;
  imported_at: string;
  imported_by: string;
}

export const toSignoff = (row: SignoffRow): Signoff => ({
  id: row.id,
  planHash: row.plan_hash,
  requestId: row.request_id,
  impactHash: row.impact_hash,
  jobHash: row.job_hash,
  signer: row.signer,
  signerKey: row.signer_key,
  signedAt: row.signed_at,
  comment: row.comment,
  statementJson: row.statement_json,
  signature: row.signature,
  publicKeyPem: row.public_key_pem,
  importedAt: row.imported_at,
  importedBy: row.imported_by,
});

export function createSignoffsRepo(db: Database.Database, clock: Clock, audit: AuditRepo): SignoffsRepo {
  const statements = {
    find: db.prepare<[string, string], SignoffRow>('SELECT * FROM signoffs WHERE statement_json = ? AND signature = ?'),
    forPlan: db.prepare<[string], SignoffRow>('SELECT * FROM signoffs WHERE plan_hash = ? ORDER BY id'),
    forRequest: db.prepare<[string], SignoffRow>('SELECT * FROM signoffs WHERE request_id = ? ORDER BY id'),
    list: db.prepare<[], SignoffRow>('SELECT * FROM signoffs ORDER BY id'),
    runOf: db.prepare<[string], string>('SELECT run_id FROM runs WHERE run_id = ?').pluck(),
    insert: db.prepare<Record<string, unknown>, SignoffRow>(`
      INSERT INTO signoffs (plan_hash, request_id, impact_hash, job_hash, signer, signer_key, signed_at, comment,
        statement_json, signature, public_key_pem, imported_at, imported_by)
      VALUES (@planHash, @requestId, @impactHash, @jobHash, @signer, @signerKey, @at, @comment,
        @statementJson, @signature, @publicKeyPem, @now, @actor)
      RETURNING *`),
  };

  const record = db.transaction((file: SignatureFile, actor: string) => {
    const existing = statements.find.get(file.signedText, file.signature);
    if (existing !== undefined) return { signoff: toSignoff(existing), created: false };
    const s = file.statement;
    const row = statements.insert.get({
      ...s,
      statementJson: file.signedText,
      signature: file.signature,
      publicKeyPem: file.publicKeyPem,
      now: clock().toISOString(),
      actor,
    });
    if (row === undefined) throw new Error('INSERT … RETURNING gave no sign-off row');
    audit.append({
      runId: statements.runOf.get(s.requestId) ?? null,
      entity: 'signoff',
      entityId: String(row.id),
      event: 'signoff.imported',
      actor,
      detail: {
        planHash: s.planHash,
        requestId: s.requestId,
        impactHash: s.impactHash,
        jobHash: s.jobHash,
        signer: s.signer,
        signerKey: s.signerKey,
        statementSha256: sha256Hex(file.signedText),
        signature: file.signature,
      },
    });
    return { signoff: toSignoff(row), created: true };
  });

  return {
    record: (file, actor) => record.immediate(file, actor),
    forPlan: (planHash) => statements.forPlan.all(planHash).map(toSignoff),
    forRequest: (requestId) => statements.forRequest.all(requestId).map(toSignoff),
    list: () => statements.list.all().map(toSignoff),
  };
}
