/**
 * Tampering, caught precisely. A real signed run on PostgreSQL, then its JSON bundle and a copy
 * of its database are altered in each way — edit, delete, reorder, truncate, swap a signature,
 * re-sign with an unregistered key — and `run-backfill verify` names what and where (exit 1).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../shared/canonicalJson.ts';
import { entryHash, sha256Hex, type ChainedEntry } from '../../electron/engine/evidence/chain.ts';
import { checkpointText, type Checkpoint } from '../../electron/engine/evidence/checkpoints.ts';
import { fingerprint, generateKeys, publicKeyPem, signText } from '../../electron/engine/evidence/keys.ts';
import { buildManifest, manifestHash } from '../../electron/engine/evidence/manifest.ts';
import type { NoteBundle } from '../../electron/engine/evidence/bundle.ts';
import { cli, signedRun, type SignedRun } from '../support/evidenceRun.ts';

let s: SignedRun;
let original: NoteBundle;
const mallory = generateKeys();
const malloryPem = publicKeyPem(mallory.privateKey);
const malloryFp = fingerprint(malloryPem);

beforeAll(async () => {
  s = await signedRun('ev_tamper');
  original = s.bundle as unknown as NoteBundle;
});
afterAll(async () => {
  await s?.db.drop();
});

const clone = (): NoteBundle => structuredClone(original);
const short = (h: string) => `${h.slice(0, 12)}…`;
const label = (e: ChainedEntry) => `seq ${e.seq} (${e.event}, ${e.at})`;
const entryOf = (b: NoteBundle, event: string, id: string) => {
  const e = b.audit.find((x) => x.event === event && x.entityId === id);
  if (!e) throw new Error(`no ${event} ${id} in the bundle`);
  return e;
};

async function verifyBundleFile(name: string, bundle: NoteBundle, extra: string[] = []) {
  const file = join(s.ws.dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(bundle, null, 2));
  return cli(s.ws, ['verify', file, ...extra], 1);
}

describe('a tampered bundle', () => {
  it('is intact as exported, head signed', async () => {
    const r = await cli(s.ws, ['verify', s.bundleFile]);
    expect(r.stdout).toMatch(/^INTACT: .* — audit seq \d+–\d+, head [0-9a-f]{64}, head signed/);
  });

  const published = (b: NoteBundle) => entryOf(b, 'partition.published', '2026-05-03');
  const index = (b: NoteBundle, e: ChainedEntry) => b.audit.findIndex((x) => x.seq === e.seq);

  it.each<[string, (b: NoteBundle) => void, (b: NoteBundle) => string[]]>([
    [
      'edit: a partition row',
      (b) => void (b.partitions[2] = { ...b.partitions[2], rowsWritten: 41 }),
      () => ['partition 2026-05-03 (partitions[2]) was changed after export: field rowsWritten'],
    ],
    [
      'edit: one byte of an audit entry',
      (b) => void ((published(b).detail as { rowsWritten: number }).rowsWritten = 41),
      (b) => [
        `entry ${label(published(b))} was changed after it was written: its content no longer matches its hash ${short(published(b).hash)} (field detail.rowsWritten changed)`,
      ],
    ],
    [
      'edit: an evidence body',
      (b) => {
        const e = b.evidence.find((x) => x.kind === 'reconciliation');
        if (e) e.bodyJson = e.bodyJson.replace('"ok":true', '"ok":fals');
      },
      (b) => [
        `evidence #${b.evidence.find((x) => x.kind === 'reconciliation')?.id} (evidence[${b.evidence.findIndex((x) => x.kind === 'reconciliation')}]) was changed after export: field bodyJson`,
      ],
    ],
    [
      'delete: an audit entry',
      (b) => void b.audit.splice(index(b, published(b)), 1),
      (b) => {
        const i = index(b, published(b));
        return [
          `entry seq ${published(b).seq} is missing (deleted): the log goes from ${label(b.audit[i - 1] as ChainedEntry)} to ${label(b.audit[i + 1] as ChainedEntry)}`,
        ];
      },
    ],
    [
      'delete: an evidence record',
      (b) =>
        void b.evidence.splice(
          b.evidence.findIndex((x) => x.kind === 'dry-run'),
          1,
        ),
      (b) => [`evidence #${b.evidence.find((x) => x.kind === 'dry-run')?.id} is missing from evidence[]: it was removed after export`],
    ],
    [
      'reorder: two audit entries',
      (b) => {
        const i = index(b, published(b));
        [b.audit[i], b.audit[i + 1]] = [b.audit[i + 1] as ChainedEntry, b.audit[i] as ChainedEntry];
      },
      (b) => {
        const i = index(b, published(b));
        const next = b.audit[i + 1] as ChainedEntry;
        return [`entries seq ${published(b).seq} and ${next.seq} were swapped: the log lists ${label(next)} before ${label(published(b))}`];
      },
    ],
    [
      'reorder: two partitions',
      (b) => void ([b.partitions[1], b.partitions[2]] = [b.partitions[2] ?? {}, b.partitions[1] ?? {}]),
      () => ['partitions[]: partition 2026-05-02 and 2026-05-03 were swapped (reordered after export)'],
    ],
    [
      'truncate: the last two entries',
      (b) => void b.audit.splice(-2, 2),
      (b) => {
        const [last, cp] = [b.audit.at(-3) as ChainedEntry, b.checkpoints.at(-1) as Checkpoint];
        return [
          `the audit slice ends at seq ${last.seq} (${last.event}), not at its note.exported entry: entries were removed from its end (truncated)`,
          `the audit log ends at seq ${last.seq}, but checkpoint #${cp.id} (seq ${cp.seq}, signed by bob at ${cp.at}) covers up to seq ${cp.seq}: seq ${last.seq + 1}–${cp.seq} were removed from its end (truncated)`,
        ];
      },
    ],
    [
      'swap a signature: the sign-off and the last checkpoint trade theirs',
      (b) => {
        const [so, cp] = [b.signoffs[0], b.checkpoints.at(-1)];
        if (so && cp) [so.signature, cp.signature] = [cp.signature, so.signature];
      },
      (b) => {
        const so = b.signoffs[0];
        const st = so?.statement as { planHash: string; signerKey: string };
        const cp = b.checkpoints.at(-1) as Checkpoint;
        return [
          `sign-off #${so?.id} (by alice, plan ${short(st.planHash)}): the signature does not verify against alice's key ${st.signerKey.slice(0, 16)}: it was swapped or altered`,
          `checkpoint #${cp.id} (seq ${cp.seq}, signed by bob at ${cp.at}): the signature does not verify against bob's key ${cp.signerKey.slice(0, 16)}: the checkpoint or its signature was altered or swapped`,
        ];
      },
    ],
    [
      're-sign: the sign-off edited and re-signed with an unregistered key',
      (b) => {
        const so = b.signoffs[0];
        if (!so) return;
        so.statement = { ...so.statement, comment: 'approved, all 90 days', signerKey: malloryFp };
        so.signedText = canonicalJson(so.statement);
        so.signature = signText(mallory.privateKey, so.signedText);
        so.publicKeyPem = malloryPem;
      },
      (b) => {
        const so = b.signoffs[0];
        const st = so?.statement as { planHash: string };
        const alice = b.identities.find((i) => i.name === 'alice');
        return [
          `sign-off #${so?.id} (signoffs[0]) was changed after export: fields publicKeyPem, signature, signedText, statement.comment, statement.signerKey`,
          `sign-off #${so?.id} (by alice, plan ${short(st.planHash)}) is signed with key ${malloryFp.slice(0, 16)}: key ${malloryFp.slice(0, 16)} is not alice's key ${alice?.fingerprint.slice(0, 16)} registered in ${s.ws.db}`,
        ];
      },
    ],
  ])('%s', async (name, tamper, expected) => {
    const bundle = clone();
    tamper(bundle);
    const r = await verifyBundleFile(name.replace(/\W+/g, '-'), bundle);
    expect(r.stdout).toMatch(/^BROKEN: /);
    for (const message of expected(clone())) expect(r.stdout).toContain(`✘ ${message}`);
  });

  it('rebuilt end to end and re-signed with an unregistered key: UNTRUSTED, with the registry or with pinned keys (exit 4)', async () => {
    const b = clone();
    for (const identity of b.identities) Object.assign(identity, { publicKeyPem: malloryPem, fingerprint: malloryFp });
    for (const so of b.signoffs) {
      so.statement = { ...so.statement, comment: 'approved, all 90 days', signerKey: malloryFp };
      so.signedText = canonicalJson(so.statement);
      so.signature = signText(mallory.privateKey, so.signedText);
      so.publicKeyPem = malloryPem;
      const e = entryOf(b, 'signoff.imported', String(so.id));
      e.detail = { ...e.detail, signature: so.signature, statementSha256: sha256Hex(so.signedText), signerKey: malloryFp };
    }
    // Re-chain every entry in order, re-signing each checkpoint as its entry comes, the manifest last.
    const hashAt = (seq: number) => b.audit.find((e) => e.seq === seq)?.hash ?? '';
    const resign = (c: Checkpoint) => {
      Object.assign(c, { signerKey: malloryFp, hash: hashAt(c.seq) });
      c.signature = signText(mallory.privateKey, checkpointText(c));
    };
    b.audit.forEach((e, i) => {
      if (i > 0) e.prevHash = (b.audit[i - 1] as ChainedEntry).hash;
      const cp = e.event === 'audit.checkpoint' ? b.checkpoints.find((c) => String(c.id) === e.entityId) : undefined;
      if (cp) {
        resign(cp);
        e.detail = { ...e.detail, hash: cp.hash, signerKey: malloryFp, signature: cp.signature };
      }
      if (i === b.audit.length - 1) {
        b.manifest = buildManifest({ ...b, audit: b.audit.slice(0, -1) });
        e.detail = { ...e.detail, manifestSha256: manifestHash(b.manifest) };
      }
      e.hash = entryHash(e.prevHash, e);
    });
    const head = b.audit.at(-1) as ChainedEntry;
    for (const c of b.checkpoints.filter((x) => x.seq === head.seq)) resign(c);
    const file = join(s.ws.dir, 'rebuilt.json');
    writeFileSync(file, JSON.stringify(b));
    // Self-consistent: nothing inside it can tell. The workspace's registered keys can.
    const unpinned = await cli(s.ws, ['verify', file], 4);
    expect(unpinned.stdout).toMatch(/^UNTRUSTED: /);
    expect(unpinned.stdout).toMatch(
      /✘ identity alice in the bundle carries key [0-9a-f]{16}, but .*runbook\.sqlite registers alice with key [0-9a-f]{16}: the bundle's identities were re-keyed/,
    );
    for (const name of ['alice', 'bob'])
      await cli(s.ws, ['identity', 'export-public', '--name', name, '--out', join(s.ws.dir, `${name}.pub.pem`)]);
    const pinned = await cli(
      s.ws,
      ['verify', file, '--trust', join(s.ws.dir, 'alice.pub.pem'), '--trust', join(s.ws.dir, 'bob.pub.pem')],
      4,
    );
    const so = b.signoffs[0];
    expect(pinned.stdout).toContain(
      `✘ sign-off #${so?.id} (by alice, plan ${short(String(so?.statement.planHash))}) is signed with key ${malloryFp.slice(0, 16)}: alice's key ${malloryFp.slice(0, 16)} is not among the keys pinned with --trust`,
    );
    expect(pinned.stdout).toMatch(
      /✘ checkpoint #\d+ \(seq \d+, signed by bob at [^)]+\) is signed with key [0-9a-f]{16}: bob's key [0-9a-f]{16} is not among the keys pinned with --trust/,
    );
  });
});

describe('a tampered database', () => {
  let n = 0;
  /** A consistent copy of the workspace database with its append-only triggers dropped, as an attacker would. */
  function tamperedCopy(sql: (db: Database.Database) => void): string {
    const copy = join(s.ws.dir, `tampered-${++n}.sqlite`);
    const source = new Database(s.ws.db, { readonly: true });
    source.exec(`VACUUM INTO '${copy}'`);
    source.close();
    const db = new Database(copy);
    for (const { name } of db.prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'trigger'").all())
      db.exec(`DROP TRIGGER ${name}`);
    sql(db);
    db.close();
    return copy;
  }
  const row = (db: Database.Database, where: string) =>
    db.prepare<[], ChainedRow>(`SELECT * FROM audit_log WHERE ${where}`).get() as ChainedRow;
  interface ChainedRow {
    seq: number;
    at: string;
    event: string;
    hash: string;
  }
  const at = (r: ChainedRow) => `seq ${r.seq} (${r.event}, ${r.at})`;
  let published: ChainedRow;
  let before: ChainedRow;
  let after: ChainedRow;
  let checkpoints: Checkpoint[];

  beforeAll(() => {
    const db = new Database(s.ws.db, { readonly: true });
    published = row(db, `event = 'partition.published' AND entity_id = '2026-05-03' AND run_id = '${s.runId}'`);
    before = row(db, `seq = ${published.seq - 1}`);
    after = row(db, `seq = ${published.seq + 1}`);
    checkpoints = db
      .prepare<[], Checkpoint & { signer_key: string }>('SELECT * FROM audit_checkpoints ORDER BY id')
      .all()
      .map((c) => ({ ...c, signerKey: c.signer_key }));
    db.close();
  });

  const verifyDb = (file: string, code = 1) => cli(s.ws, ['verify', '--db', file], code);

  it('is intact as left by the run', async () => {
    const r = await verifyDb(
      tamperedCopy(() => undefined),
      0,
    );
    expect(r.stdout).toMatch(/^INTACT: .* — \d+ entries, head seq \d+ [0-9a-f]{64}/);
  });

  it.each<[string, (db: Database.Database) => void, () => string]>([
    [
      'edit: one byte of an entry',
      (db) =>
        db
          .prepare('UPDATE audit_log SET detail_json = replace(detail_json, \'"rowsWritten":40\', \'"rowsWritten":41\') WHERE seq = ?')
          .run(published.seq),
      () => `entry ${at(published)} was changed after it was written: its content no longer matches its hash ${short(published.hash)}`,
    ],
    [
      'delete: an entry in the middle',
      (db) => db.prepare('DELETE FROM audit_log WHERE seq = ?').run(published.seq),
      () => `entry seq ${published.seq} is missing (deleted): the log goes from ${at(before)} to ${at(after)}`,
    ],
    [
      'reorder: two neighbouring entries',
      (db) => {
        db.prepare('UPDATE audit_log SET seq = -1 WHERE seq = ?').run(published.seq);
        db.prepare('UPDATE audit_log SET seq = ? WHERE seq = ?').run(published.seq, after.seq);
        db.prepare('UPDATE audit_log SET seq = ? WHERE seq = -1').run(after.seq);
      },
      () =>
        `entries seq ${published.seq} and ${after.seq} were swapped: each holds the other's content (${after.event} / ${published.event})`,
    ],
    [
      'truncate: the entries after a signed checkpoint',
      (db) => db.prepare('DELETE FROM audit_log WHERE seq >= ?').run((checkpoints[0] as Checkpoint).seq - 1),
      () => {
        const cp = checkpoints[0] as Checkpoint;
        return `the audit log ends at seq ${cp.seq - 2}, but checkpoint #${cp.id} (seq ${cp.seq}, signed by bob at ${cp.at}) covers up to seq ${cp.seq}: seq ${cp.seq - 1}–${cp.seq} were removed from its end (truncated)`;
      },
    ],
    [
      'swap a signature between two checkpoints',
      (db) => {
        const [a, b] = checkpoints as [Checkpoint, Checkpoint];
        db.prepare('UPDATE audit_checkpoints SET signature = ? WHERE id = ?').run(b.signature, a.id);
        db.prepare('UPDATE audit_checkpoints SET signature = ? WHERE id = ?').run(a.signature, b.id);
      },
      () => {
        const cp = checkpoints[0] as Checkpoint;
        return `checkpoint #${cp.id} (seq ${cp.seq}, signed by bob at ${cp.at}): the signature does not verify against bob's key ${cp.signerKey.slice(0, 16)}: the checkpoint or its signature was altered or swapped`;
      },
    ],
    [
      're-sign: a sign-off replaced by one signed with an unregistered key',
      (db) => {
        const so = db
          .prepare<[], { id: number; statement_json: string }>('SELECT id, statement_json FROM signoffs ORDER BY id LIMIT 1')
          .get();
        const statement = { ...(JSON.parse(so?.statement_json ?? '{}') as object), comment: 'approved, all 90 days', signerKey: malloryFp };
        const text = canonicalJson(statement);
        db.prepare(
          'UPDATE signoffs SET statement_json = ?, signature = ?, signer_key = ?, public_key_pem = ?, comment = ? WHERE id = ?',
        ).run(text, signText(mallory.privateKey, text), malloryFp, malloryPem, 'approved, all 90 days', so?.id);
      },
      () => {
        const db = new Database(s.ws.db, { readonly: true });
        const alice = db.prepare<[], string>("SELECT fingerprint FROM identities WHERE name = 'alice'").pluck().get() ?? '';
        const entry = db
          .prepare<[], number>("SELECT seq FROM audit_log WHERE event = 'signoff.imported' ORDER BY seq LIMIT 1")
          .pluck()
          .get();
        db.close();
        return `sign-off #1: its signature differs from the one recorded when it was imported: swapped or re-signed; it is now signed with key ${malloryFp.slice(0, 16)}, not alice's registered key ${alice.slice(0, 16)} (recorded at audit seq ${entry})`;
      },
    ],
    [
      're-sign: a checkpoint re-signed by an unregistered signer',
      (db) => {
        const cp = { ...(checkpoints[0] as Checkpoint), signer: 'mallory', signerKey: malloryFp };
        db.prepare('UPDATE audit_checkpoints SET signer = ?, signer_key = ?, signature = ? WHERE id = ?').run(
          'mallory',
          malloryFp,
          signText(mallory.privateKey, checkpointText(cp)),
          cp.id,
        );
      },
      () => {
        const cp = checkpoints[0] as Checkpoint;
        return `checkpoint #${cp.id} (seq ${cp.seq}, signed by mallory at ${cp.at}) is signed by mallory (key ${malloryFp.slice(0, 16)}), who is not among the registered identities: signed with an unregistered key`;
      },
    ],
    [
      'edit: an evidence body',
      (db) => db.exec(`UPDATE evidence SET body_json = replace(body_json, '"ok":true', '"ok":false') WHERE kind = 'reconciliation'`),
      () => {
        const db = new Database(s.ws.db, { readonly: true });
        const e = db
          .prepare<[], { id: number; body_sha256: string }>("SELECT id, body_sha256 FROM evidence WHERE kind = 'reconciliation'")
          .get();
        const seq = db
          .prepare<[], number>(`SELECT seq FROM audit_log WHERE event = 'evidence.added' AND entity_id = '${e?.id}'`)
          .pluck()
          .get();
        db.close();
        return `evidence #${e?.id}: its body (reconciliation) no longer hashes to its body_sha256 ${e?.body_sha256.slice(0, 12)}…: the body was edited (recorded at audit seq ${seq})`;
      },
    ],
  ])('%s', async (_name, tamper, expected) => {
    const r = await verifyDb(tamperedCopy(tamper));
    expect(r.stdout).toMatch(/^BROKEN: /);
    expect(r.stdout).toContain(`✘ ${expected()}`);
  });
});
