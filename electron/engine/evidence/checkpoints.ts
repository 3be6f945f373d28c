/**
 * Signed heads of the audit chain. The chain alone proves nothing was changed or removed in
 * the middle; a signed {seq, hash} also proves nothing was cut off the end before that seq, and
 * that the chain up to it is the one the signer saw (an attacker cannot rebuild it and re-sign).
 */
import type Database from 'better-sqlite3';
import { canonicalJson } from '../../../shared/canonicalJson.ts';
import type { AuditRepo } from '../store/repos/audit.ts';
import type { Clock } from '../store/types.ts';
import { signText } from './keys.ts';
import type { UnlockedIdentity } from './vault.ts';

export const CHECKPOINT_PURPOSE = 'backfill-runbook/audit-checkpoint@1';

export type CheckpointReason = 'run-finished' | 'note-exported' | 'archive-exported' | 'manual';

export interface Checkpoint {
  id: number;
  seq: number;
  hash: string;
  signer: string;
  signerKey: string;
  at: string;
  reason: string;
  signature: string;
}

/** The exact text a checkpoint's signature covers. */
export function checkpointText(cp: Omit<Checkpoint, 'id' | 'signature'>): string {
  return canonicalJson({
    purpose: CHECKPOINT_PURPOSE,
    seq: cp.seq,
    hash: cp.hash,
    signer: cp.signer,
    signerKey: cp.signerKey,
    at: cp.at,
    reason: cp.reason,
  });
}

export interface CheckpointsRepo {
  /** Signs the current head (undefined for an empty log) and records it, audited. */
  sign(signer: UnlockedIdentity, reason: CheckpointReason, runId?: string | null): Checkpoint | undefined;
  list(): Checkpoint[];
  /** Checkpoints covering seq from..to inclusive. */
  between(fromSeq: number, toSeq: number): Checkpoint[];
}

interface CheckpointRow {
  id: number;
  seq: number;
  hash: string;
  signer: string;
  signer_key: string;
  at: string;
  reason: string;
  signature: string;
}

export const toCheckpoint = (row: CheckpointRow): Checkpoint => ({
  id: row.id,
  seq: row.seq,
  hash: row.hash,
  signer: row.signer,
  signerKey: row.signer_key,
  at: row.at,
  reason: row.reason,
  signature: row.signature,
});

export function createCheckpointsRepo(db: Database.Database, clock: Clock, audit: AuditRepo): CheckpointsRepo {
  const statements = {
    insert: db.prepare<Record<string, unknown>, CheckpointRow>(`
      INSERT INTO audit_checkpoints (seq, hash, signer, signer_key, at, reason, signature)
      VALUES (@seq, @hash, @signer, @signerKey, @at, @reason, @signature) RETURNING *`),
    list: db.prepare<[], CheckpointRow>('SELECT * FROM audit_checkpoints ORDER BY id'),
    between: db.prepare<[number, number], CheckpointRow>('SELECT * FROM audit_checkpoints WHERE seq BETWEEN ? AND ? ORDER BY id'),
  };

  const sign = db.transaction((signer: UnlockedIdentity, reason: CheckpointReason, runId: string | null) => {
    const head = audit.head();
    if (head === undefined) return undefined;
    const unsigned = {
      seq: head.seq,
      hash: head.hash,
      signer: signer.identity.name,
      signerKey: signer.identity.fingerprint,
      at: clock().toISOString(),
      reason,
    };
    const row = statements.insert.get({ ...unsigned, signature: signText(signer.privateKey, checkpointText(unsigned)) });
    if (row === undefined) throw new Error('INSERT … RETURNING gave no checkpoint row');
    audit.append({
      runId,
      entity: 'checkpoint',
      entityId: String(row.id),
      event: 'audit.checkpoint',
      actor: signer.identity.name,
      detail: { seq: row.seq, hash: row.hash, signer: row.signer, signerKey: row.signer_key, reason, signature: row.signature },
    });
    return toCheckpoint(row);
  });

  return {
    sign: (signer, reason, runId = null) => sign.immediate(signer, reason, runId),
    list: () => statements.list.all().map(toCheckpoint),
    between: (fromSeq, toSeq) => statements.between.all(fromSeq, toSeq).map(toCheckpoint),
  };
}
