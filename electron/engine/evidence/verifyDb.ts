/**
 * `run-backfill verify --db FILE`: proves a local store untouched, reading it READ-ONLY.
 * The chain must hash from the genesis to the head; every signed checkpoint must verify and
 * match the chain (so a cut-off end shows); every evidence row, sign-off, checkpoint and
 * identity must match the audit entry written with it (so a replaced or deleted row shows).
 */
import Database from 'better-sqlite3';
import { StoreError } from '../store/errors.ts';
import { toChainedEntry } from '../store/repos/audit.ts';
import type { AuditRow } from '../store/rows.ts';
import { sha256Hex, type ChainedEntry } from './chain.ts';
import { checkCheckpoints, signerProblem, type CheckpointFinding } from './checkpointCheck.ts';
import { toCheckpoint } from './checkpoints.ts';
import type { Identity } from './identities.ts';
import { shortFingerprint } from './keys.ts';
import { toSignoff } from './signoffs.ts';
import { verifyChain, type ChainReport } from './verifyChain.ts';

export interface DbVerification {
  file: string;
  ok: boolean;
  chain: ChainReport;
  checkpoints: CheckpointFinding[];
  /** Everything that is broken, most important first; empty when intact. */
  problems: string[];
  /** Facts that are not breaks (entries past the last checkpoint, sign-offs that do not count). */
  notes: string[];
}

type Row = Record<string, unknown>;

export function verifyDatabase(file: string): DbVerification {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new StoreError(`cannot open ${file} to verify it: ${err instanceof Error ? err.message : String(err)}`, 'io', file, {
      cause: err,
    });
  }
  try {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version < 2)
      throw new StoreError(
        `${file} has schema version ${version}, from before the audit chain: open it once with this build to chain it, then verify`,
        'invalid',
        file,
      );
    return verifyOpen(db, file);
  } finally {
    db.close();
  }
}

function verifyOpen(db: Database.Database, file: string): DbVerification {
  const all = <T = Row>(sql: string) => db.prepare<[], T>(sql).all();
  const rows = all<AuditRow & { prev_hash: string | null; hash: string | null }>('SELECT * FROM audit_log ORDER BY seq');
  const problems: string[] = [];
  const notes: string[] = [];
  const unchained = rows.every((r) => r.hash === null);
  const entries: ChainedEntry[] = unchained ? [] : rows.map(toChainedEntry);
  if (unchained && rows.length > 0) notes.push(`all ${rows.length} entries predate the audit chain; they are chained at the next write`);
  const chain = verifyChain(entries, { fromGenesis: true });
  if (chain.broken) problems.push(chain.broken.message);
  const bySeq = new Map(entries.map((e) => [e.seq, e]));

  const identities = new Map(
    all<Row>('SELECT * FROM identities').map((r) => [
      r.name as string,
      { name: r.name as string, role: r.role as string, fingerprint: r.fingerprint as string, publicKeyPem: r.public_key_pem as string },
    ]),
  );
  const checkpoints = checkCheckpoints(
    all<Parameters<typeof toCheckpoint>[0]>('SELECT * FROM audit_checkpoints ORDER BY id').map(toCheckpoint),
    bySeq,
    { firstSeq: chain.firstSeq, lastSeq: chain.head?.seq ?? null },
    {
      judge: (what, signer, signerKey) => signerProblem(what, signer, signerKey, (name) => identities.get(name), 'registered identities'),
    },
  );
  for (const c of checkpoints) problems.push(...c.untrusted, ...c.problems);
  const lastSigned = Math.max(0, ...checkpoints.filter((c) => c.signed).map((c) => c.checkpoint.seq));
  if (chain.head && chain.head.seq > lastSigned) {
    notes.push(
      lastSigned === 0
        ? 'no signed checkpoint yet: entries removed from the end of the log would not show'
        : `entries after seq ${lastSigned} are not yet covered by a signed checkpoint`,
    );
  }

  const audited = (event: string) => new Map(entries.filter((e) => e.event === event).map((e) => [e.entityId, e]));
  const matchRows = <T>(
    what: string,
    event: string,
    items: T[],
    idOf: (t: T) => string,
    compare: (t: T, detail: Record<string, unknown>) => string | null,
  ) => {
    const byId = audited(event);
    for (const item of items) {
      const entry = byId.get(idOf(item));
      byId.delete(idOf(item));
      if (!entry) {
        problems.push(`${what}${idOf(item)} has no ${event} entry in the audit log: it was added around the audit repository`);
        continue;
      }
      const mismatch = compare(item, entry.detail);
      if (mismatch) problems.push(`${what}${idOf(item)}: ${mismatch} (recorded at audit seq ${entry.seq})`);
    }
    for (const [id, entry] of byId) problems.push(`${what}${id} recorded at audit seq ${entry.seq} (${event}) is missing: it was deleted`);
  };

  const evidence = all<{ id: number; kind: string; body_json: string; body_sha256: string }>(
    'SELECT id, kind, body_json, body_sha256 FROM evidence ORDER BY id',
  );
  matchRows(
    'evidence #',
    'evidence.added',
    evidence,
    (e) => String(e.id),
    (e, d) => {
      if (sha256Hex(e.body_json) !== e.body_sha256)
        return `its body (${e.kind}) no longer hashes to its body_sha256 ${e.body_sha256.slice(0, 12)}…: the body was edited`;
      return d.bodySha256 !== e.body_sha256
        ? `its body_sha256 ${e.body_sha256.slice(0, 12)}… differs from the ${String(d.bodySha256).slice(0, 12)}… recorded when it was added: it was replaced`
        : null;
    },
  );
  const signoffs = all<Parameters<typeof toSignoff>[0]>('SELECT * FROM signoffs ORDER BY id').map(toSignoff);
  matchRows(
    'sign-off #',
    'signoff.imported',
    signoffs,
    (s) => String(s.id),
    (s, d) => {
      if (d.signature !== s.signature) {
        const registered = identities.get(s.signer);
        const key =
          registered && registered.fingerprint !== s.signerKey
            ? `; it is now signed with key ${shortFingerprint(s.signerKey)}, not ${s.signer}'s registered key ${shortFingerprint(registered.fingerprint)}`
            : '';
        return `its signature differs from the one recorded when it was imported: swapped or re-signed${key}`;
      }
      if (d.statementSha256 !== sha256Hex(s.statementJson))
        return 'its signed statement differs from the one recorded when it was imported: it was edited';
      if (d.planHash !== s.planHash || d.signer !== s.signer || d.signerKey !== s.signerKey)
        return 'its plan, signer or key columns differ from the signed statement';
      return null;
    },
  );
  for (const s of signoffs) {
    if (!identities.has(s.signer)) notes.push(`sign-off #${s.id} is by ${s.signer}, who is not registered here: it does not count`);
  }
  matchRows(
    'checkpoint #',
    'audit.checkpoint',
    checkpoints.map((c) => c.checkpoint),
    (c) => String(c.id),
    (c, d) =>
      d.signature !== c.signature || d.seq !== c.seq || d.hash !== c.hash
        ? 'it differs from the checkpoint recorded in the audit log: swapped or replaced'
        : null,
  );
  matchRows(
    'identity ',
    'identity.registered',
    [...identities.values()] as Pick<Identity, 'name' | 'role' | 'fingerprint'>[],
    (i) => i.name,
    (i, d) =>
      d.fingerprint !== i.fingerprint || d.role !== i.role
        ? `its key ${shortFingerprint(i.fingerprint)} or role ${i.role} differs from the ones registered`
        : null,
  );
  return { file, ok: problems.length === 0, chain, checkpoints, problems, notes };
}
