/**
 * The audit chain's one rule, shared by the store (which writes it) and every verifier:
 *
 *   hash = SHA-256( prev_hash ‖ RFC 8785 canonical JSON of the entry )
 *
 * where prev_hash is the previous entry's hash as 64 lowercase hex characters (64 zeros before
 * the first entry), ‖ is plain concatenation of the two texts, and the hash is taken over their
 * UTF-8 bytes. The entry is its ten content fields (below) — seq included, so moving an entry
 * breaks it too. Anyone can recompute a hash with a JSON canonicaliser and `sha256sum`.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../../shared/canonicalJson.ts';

export const GENESIS_HASH = '0'.repeat(64);

/** The hashed content of one audit entry (AuditEntry of the store, exactly). */
export interface ChainEntryContent {
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

export interface ChainedEntry extends ChainEntryContent {
  prevHash: string;
  hash: string;
}

export const CONTENT_FIELDS = ['seq', 'at', 'runId', 'entity', 'entityId', 'event', 'fromStatus', 'toStatus', 'actor', 'detail'] as const;

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Only the ten content fields, in a fresh object: extra properties never change a hash. */
export function entryContent(entry: ChainEntryContent): ChainEntryContent {
  const { seq, at, runId, entity, entityId, event, fromStatus, toStatus, actor, detail } = entry;
  return { seq, at, runId, entity, entityId, event, fromStatus, toStatus, actor, detail };
}

export function entryHash(prevHash: string, entry: ChainEntryContent): string {
  return sha256Hex(prevHash + canonicalJson(entryContent(entry)));
}

export function isHexHash(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
}
