/**
 * What a forger with a text editor and our source code can do to a bundle: change anything,
 * then recompute every hash (the chain, the manifest, the note.exported entry's manifest hash)
 * and sign every checkpoint again with a key of their own — or strip the signatures. The
 * result is self-consistent by construction; only trust from outside the bundle can refuse it.
 */
import { gzipSync } from 'node:zlib';
import { canonicalJson } from '../../shared/canonicalJson.ts';
import type { RunArchive } from '../../electron/engine/evidence/archive.ts';
import type { NoteBundle } from '../../electron/engine/evidence/bundle.ts';
import { entryHash, sha256Hex, type ChainedEntry } from '../../electron/engine/evidence/chain.ts';
import { checkpointText, type Checkpoint } from '../../electron/engine/evidence/checkpoints.ts';
import { fingerprint, publicKeyPem, signText } from '../../electron/engine/evidence/keys.ts';
import { buildManifest, manifestHash } from '../../electron/engine/evidence/manifest.ts';
import type { KeyObject } from 'node:crypto';

export interface ForgerKey {
  privateKey: KeyObject;
  pem: string;
  fp: string;
}

export function forgerKey(keys: { privateKey: KeyObject }): ForgerKey {
  const pem = publicKeyPem(keys.privateKey);
  return { privateKey: keys.privateKey, pem, fp: fingerprint(pem) };
}

/** Removes every sign-off and checkpoint, and the audit entries that recorded them. */
export function stripSignatures(b: NoteBundle): void {
  b.signoffs = [];
  b.checkpoints = [];
  b.audit = b.audit.filter((e) => e.event !== 'signoff.imported' && e.event !== 'audit.checkpoint');
}

/** Re-signs a sign-off as `signer` with the forger's key (statement, text, signature, PEM, audit entry). */
export function resignSignoff(b: NoteBundle, key: ForgerKey, changes: Record<string, unknown> = {}, signer?: string): void {
  for (const so of b.signoffs) {
    so.statement = { ...so.statement, ...changes, signerKey: key.fp, ...(signer ? { signer } : {}) };
    so.signedText = canonicalJson(so.statement);
    so.signature = signText(key.privateKey, so.signedText);
    so.publicKeyPem = key.pem;
    const e = b.audit.find((x) => x.event === 'signoff.imported' && x.entityId === String(so.id));
    if (e)
      e.detail = {
        ...e.detail,
        signature: so.signature,
        statementSha256: sha256Hex(so.signedText),
        signerKey: key.fp,
        ...(signer ? { signer } : {}),
      };
  }
}

/**
 * Renumbers the slice from `firstSeq` (default: where it starts), recomputes every link, hash,
 * the manifest and the note.exported entry; each checkpoint is re-signed with `key` as its
 * entry comes by (or left as it is when no key is given), and `headSigner` adds one over the head.
 */
export function rechain(b: NoteBundle, opts: { firstSeq?: number; key?: ForgerKey; signerName?: string; headSigner?: string } = {}): void {
  const first = b.audit[0] as ChainedEntry;
  const oldToNew = new Map<number, number>();
  let seq = opts.firstSeq ?? first.seq;
  for (const e of b.audit) {
    oldToNew.set(e.seq, seq);
    e.seq = seq++;
  }
  const resign = (c: Checkpoint) => {
    if (!opts.key) return;
    const entry = b.audit.find((e) => e.seq === c.seq);
    Object.assign(c, { signerKey: opts.key.fp, hash: entry?.hash ?? c.hash, ...(opts.signerName ? { signer: opts.signerName } : {}) });
    c.signature = signText(opts.key.privateKey, checkpointText(c));
  };
  for (const c of b.checkpoints) c.seq = oldToNew.get(c.seq) ?? c.seq;
  const last = b.audit.length - 1;
  b.audit.forEach((e, i) => {
    if (i > 0) e.prevHash = (b.audit[i - 1] as ChainedEntry).hash;
    const cp = e.event === 'audit.checkpoint' ? b.checkpoints.find((c) => String(c.id) === e.entityId) : undefined;
    if (cp && opts.key) {
      resign(cp);
      e.detail = { ...e.detail, seq: cp.seq, hash: cp.hash, signer: cp.signer, signerKey: cp.signerKey, signature: cp.signature };
    }
    if (i === last) {
      const covered = b.audit.slice(0, -1);
      b.manifest = buildManifest({ ...b, audit: covered });
      e.detail = {
        ...e.detail,
        manifestSha256: manifestHash(b.manifest),
        auditFrom: covered[0]?.seq ?? null,
        auditTo: covered.at(-1)?.seq ?? null,
      };
    }
    e.hash = entryHash(e.prevHash, e);
  });
  const head = b.audit[last] as ChainedEntry;
  for (const c of b.checkpoints.filter((x) => x.seq === head.seq)) resign(c);
  if (opts.key && opts.headSigner) {
    const unsigned = {
      seq: head.seq,
      hash: head.hash,
      signer: opts.headSigner,
      signerKey: opts.key.fp,
      at: head.at,
      reason: 'note-exported',
    };
    b.checkpoints.push({
      id: 9_000 + b.checkpoints.length,
      ...unsigned,
      signature: signText(opts.key.privateKey, checkpointText(unsigned)),
    });
  }
}

/** An archive around a forged bundle, its ledger rows made to agree with it. */
export function forgedArchive(
  original: RunArchive,
  bundle: NoteBundle,
  partitionEdits: Record<string, Record<string, unknown>> = {},
): Buffer {
  const archive = structuredClone(original);
  archive.bundle = bundle;
  for (const row of archive.ledger.partitions) Object.assign(row, partitionEdits[String(row.partition_key)] ?? {});
  return gzipSync(Buffer.from(JSON.stringify(archive)));
}
