/**
 * Forgeries that recompute every hash, against the real CLI. A signed manual-tier run on
 * PostgreSQL is exported; a forger then strips or re-signs its signatures, re-keys its
 * identities, rebuilds its chain and manifest, or borrows another bundle's head checkpoint.
 * Each bundle is self-consistent, so only trust from outside it can refuse it: `verify` must
 * never say INTACT (exit 1 BROKEN or 4 UNTRUSTED / NOT SIGNED OFF, with the precise reason),
 * with the workspace's registered identities or with `--trust` pinning the real keys, and
 * `import` must refuse the same archives before it stores a single row.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunArchive } from '../../electron/engine/evidence/archive.ts';
import type { NoteBundle } from '../../electron/engine/evidence/bundle.ts';
import type { ChainedEntry } from '../../electron/engine/evidence/chain.ts';
import type { Checkpoint } from '../../electron/engine/evidence/checkpoints.ts';
import { generateKeys } from '../../electron/engine/evidence/keys.ts';
import { readArchive } from '../../electron/engine/evidence/archive.ts';
import { cli, signedRun, type SignedRun } from '../support/evidenceRun.ts';
import { forgedArchive, forgerKey, rechain, resignSignoff, stripSignatures } from '../support/forge.ts';
import { TEST_PASSPHRASE } from '../support/signoff.ts';
import { makeWorkspace, type Workspace } from '../support/workspace.ts';

const P = ['--passphrase-env', 'BACKFILL_TEST_PASSPHRASE'];
const mallory = forgerKey(generateKeys());
const k16 = (fp: string) => fp.slice(0, 16);

let s: SignedRun;
let original: NoteBundle;
let archive: RunArchive;
let later: NoteBundle; // a second export of the same run: another bundle, with its own signed head
let reviewer: Workspace; // another machine: alice (lead) and bob (operator) registered from their public keys
let pins: string[];
let fp: { alice: string; bob: string };

beforeAll(async () => {
  s = await signedRun('ev_forgery');
  original = s.bundle as unknown as NoteBundle;
  const archiveFile = join(s.ws.dir, 'genuine.bfr');
  await cli(s.ws, ['archive', '--run-id', s.runId, '--out', archiveFile, '--identity', 'bob', ...P]);
  archive = await readArchive(readFileSync(archiveFile), archiveFile);
  const laterFile = join(s.ws.dir, 'later.json');
  await cli(s.ws, ['export', '--run-id', s.runId, '--format', 'json', '--out', laterFile, '--identity', 'bob', ...P]);
  later = JSON.parse(readFileSync(laterFile, 'utf8')) as NoteBundle;
  pins = [];
  for (const name of ['alice', 'bob']) {
    const pem = join(s.ws.dir, `${name}.pub.pem`);
    await cli(s.ws, ['identity', 'export-public', '--name', name, '--out', pem]);
    pins.push('--trust', pem);
  }
  const id = (name: string) => original.identities.find((i) => i.name === name)?.fingerprint ?? '';
  fp = { alice: id('alice'), bob: id('bob') };
  reviewer = makeWorkspace('ev_forgery_review', { BACKFILL_TEST_PASSPHRASE: TEST_PASSPHRASE });
  await cli(reviewer, ['identity', 'register', '--name', 'alice', '--role', 'lead', '--public-key', join(s.ws.dir, 'alice.pub.pem')]);
  await cli(reviewer, ['identity', 'register', '--name', 'bob', '--role', 'operator', '--public-key', join(s.ws.dir, 'bob.pub.pem')]);
});
afterAll(async () => {
  await s?.db.drop();
});

const clone = (): NoteBundle => structuredClone(original);
const head = (b: NoteBundle) => b.audit.at(-1) as ChainedEntry;
const planShort = () => `${String(original.run[0]?.planHash).slice(0, 12)}…`;
const signoffId = () => original.signoffs[0]?.id;

/** Changes what the note proves: partition 2026-05-03's rows, in the partition and in its published entry. */
function changeAmount(b: NoteBundle): void {
  const p = b.partitions.find((x) => x.key === '2026-05-03') as Record<string, unknown>;
  p.rowsWritten = 4000;
  const e = b.audit.find((x) => x.event === 'partition.published' && x.entityId === '2026-05-03');
  if (e) e.detail = { ...e.detail, rowsWritten: 4000 };
}
const amountEdit = { '2026-05-03': { rows_written: 4000 } };

function write(ws: Workspace, name: string, b: NoteBundle): string {
  const file = join(ws.dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(b, null, 2));
  return file;
}

async function refusedImport(name: string, b: NoteBundle, code: number, edits = amountEdit) {
  const file = join(reviewer.dir, `${name}.bfr`);
  writeFileSync(file, forgedArchive(archive, b, edits));
  const r = await cli(reviewer, ['import', file], code);
  expect(r.stdout).toContain('Nothing was imported: an archive is imported only when it verifies INTACT.');
  const db = new Database(reviewer.db, { readonly: true });
  const count = (table: string) => db.prepare<[], number>(`SELECT count(*) FROM ${table}`).pluck().get();
  expect([count('runs'), count('partitions'), count('imported_archives'), count('evidence')]).toEqual([0, 0, 0, 0]);
  db.close();
  return r;
}

describe('the genuine bundle', () => {
  it('is INTACT against the workspace registry, and says whose keys it trusted', async () => {
    const r = await cli(s.ws, ['verify', s.bundleFile]);
    expect(r.stdout).toMatch(
      /^INTACT: .* — audit seq \d+–\d+, head [0-9a-f]{64}, head signed by bob; signed off by alice \(lead\)\n {2}trust: identities registered in .*runbook\.sqlite: alice \(lead\), bob \(operator\)\n/,
    );
  });

  it('is INTACT with --trust pinning the real keys', async () => {
    const r = await cli(s.ws, ['verify', s.bundleFile, ...pins, '--json']);
    const report = JSON.parse(r.stdout) as { verdict: string; trust: string; trustedKeys: string; signoff: { by: string } };
    expect(report).toMatchObject({ verdict: 'intact', trust: 'pinned', signoff: { by: 'alice (lead)' } });
    expect(report.trustedKeys).toMatch(/^keys pinned with --trust: .*alice\.pub\.pem \(key [0-9a-f]{16}\), .*bob\.pub\.pem/);
  });

  it('is UNTRUSTED where nobody is registered and nothing is pinned (exit 4)', async () => {
    const stranger = makeWorkspace('ev_forgery_stranger');
    const r = await cli(stranger, ['verify', s.bundleFile], 4);
    expect(r.stdout).toMatch(/^UNTRUSTED: /);
    expect(r.stdout).toContain(`trust: identities registered in ${stranger.db} (no such ledger): none`);
    expect(r.stdout).toMatch(
      new RegExp(
        `✘ checkpoint #\\d+ \\(seq ${head(original).seq}, signed by bob at [^)]+\\) is signed with key ${k16(fp.bob)}: bob is not a registered identity in `,
      ),
    );
  });

  it('is NOT SIGNED OFF where its lead is registered only as an operator (exit 4)', async () => {
    const other = makeWorkspace('ev_forgery_operators');
    await cli(other, ['identity', 'register', '--name', 'alice', '--role', 'operator', '--public-key', join(s.ws.dir, 'alice.pub.pem')]);
    await cli(other, ['identity', 'register', '--name', 'bob', '--role', 'operator', '--public-key', join(s.ws.dir, 'bob.pub.pem')]);
    const r = await cli(other, ['verify', s.bundleFile], 4);
    expect(r.stdout).toMatch(/^NOT SIGNED OFF: .*, head signed by bob; NO sign-off that counts \(manual tier\)\n/);
    expect(r.stdout).toMatch(
      /✘ no sign-off counts for this manual-tier run: the sign-off by alice \(signed [^)]+\) does not count: alice is registered as an operator, not a lead/,
    );
  });
});

describe('a forged bundle is never INTACT', () => {
  it('(1) every signature and checkpoint stripped, an amount changed, chain and manifest rebuilt: UNTRUSTED', async () => {
    const b = clone();
    stripSignatures(b);
    changeAmount(b);
    rechain(b);
    const file = write(s.ws, 'stripped', b);
    const unsigned = `✘ the chain head (seq ${head(b).seq}, note.exported) is not signed by any key`;
    const noSignoff = `✘ this manual-tier run executed, but the bundle carries no sign-off of its plan ${planShort()}: a lead's sign-off is required`;
    for (const args of [[], pins]) {
      const r = await cli(s.ws, ['verify', file, ...args], 4);
      expect(r.stdout).toMatch(/^UNTRUSTED: .*, head NOT signed by a trusted key; NO sign-off that counts \(manual tier\)\n/);
      expect(r.stdout).toContain(unsigned);
      expect(r.stdout).toContain(noSignoff);
    }
    const imported = await refusedImport('stripped', b, 4);
    expect(imported.stdout).toContain(unsigned);
  });

  it("(2) the forger's key put into identities[], the sign-off and checkpoints re-signed with it: UNTRUSTED", async () => {
    const b = clone();
    const alice = b.identities.find((i) => i.name === 'alice');
    if (alice) Object.assign(alice, { publicKeyPem: mallory.pem, fingerprint: mallory.fp });
    resignSignoff(b, mallory, { comment: 'approved, all 90 days' });
    changeAmount(b);
    rechain(b, { key: mallory, signerName: 'alice' });
    const file = write(s.ws, 'rekeyed', b);
    const r = await cli(s.ws, ['verify', file], 4);
    expect(r.stdout).toMatch(/^UNTRUSTED: /);
    const registry = `${s.ws.db}`;
    expect(r.stdout).toContain(
      `✘ identity alice in the bundle carries key ${k16(mallory.fp)}, but ${registry} registers alice with key ${k16(fp.alice)}: the bundle's identities were re-keyed`,
    );
    expect(r.stdout).toContain(
      `✘ sign-off #${signoffId()} (by alice, plan ${planShort()}) is signed with key ${k16(mallory.fp)}: key ${k16(mallory.fp)} is not alice's key ${k16(fp.alice)} registered in ${registry}`,
    );
    expect(r.stdout).toContain(
      `✘ the chain head (seq ${head(b).seq}, note.exported) is covered only by checkpoints that do not verify against a trusted key`,
    );
    // The signature table no longer says "role lead, verified yes".
    expect(r.stdout).toMatch(/\nsign-off of plan [0-9a-f]{12}… +alice +not trusted +[0-9a-f]{16} +\S+ +NO\n/);
    const pinned = await cli(s.ws, ['verify', file, ...pins], 4);
    expect(pinned.stdout).toContain(
      `✘ sign-off #${signoffId()} (by alice, plan ${planShort()}) is signed with key ${k16(mallory.fp)}: alice's key ${k16(mallory.fp)} is not among the keys pinned with --trust`,
    );
    await refusedImport('rekeyed', b, 4);
  });

  it('(3) an amount changed, chain and manifest rebuilt, the real signatures kept: BROKEN', async () => {
    const b = clone();
    changeAmount(b);
    rechain(b);
    const cp = b.checkpoints.find((c) => c.seq === head(b).seq) as Checkpoint;
    const message = `✘ entry seq ${cp.seq} hashes to ${head(b).hash.slice(0, 12)}…, but checkpoint #${cp.id} (seq ${cp.seq}, signed by bob at ${cp.at}) signed ${cp.hash.slice(0, 12)}…: the log up to seq ${cp.seq} is not the one that was signed`;
    for (const args of [[], pins]) {
      const r = await cli(s.ws, ['verify', write(s.ws, 'rebuilt', b), ...args], 1);
      expect(r.stdout).toMatch(/^BROKEN: /);
      expect(r.stdout).toContain(message);
    }
    const imported = await refusedImport('rebuilt', b, 1);
    expect(imported.stdout).toContain(message);
  });

  it('(4) the sign-off and the head signed by an unregistered key (mallory), everything rebuilt: UNTRUSTED', async () => {
    const b = clone();
    resignSignoff(b, mallory, { comment: 'fine by me' }, 'mallory');
    changeAmount(b);
    rechain(b, { key: mallory, signerName: 'mallory' });
    const file = write(s.ws, 'unregistered', b);
    const r = await cli(s.ws, ['verify', file], 4);
    expect(r.stdout).toMatch(/^UNTRUSTED: /);
    expect(r.stdout).toContain(
      `✘ sign-off #${signoffId()} (by mallory, plan ${planShort()}) is signed with key ${k16(mallory.fp)}: mallory is not a registered identity in ${s.ws.db}`,
    );
    expect(r.stdout).toMatch(
      new RegExp(
        `✘ checkpoint #\\d+ \\(seq ${head(b).seq}, signed by mallory at [^)]+\\) is signed with key ${k16(mallory.fp)}: mallory is not a registered identity in `,
      ),
    );
    expect(r.stdout).toMatch(
      /✘ no sign-off counts for this manual-tier run: the sign-off by mallory \(signed [^)]+\) does not count: mallory is not a registered identity in /,
    );
    await refusedImport('unregistered', b, 4);
  });

  it("(5) another bundle's signed head checkpoint, where this chain ends earlier: BROKEN", async () => {
    const b = clone();
    stripSignatures(b);
    changeAmount(b);
    rechain(b);
    const borrowed = later.checkpoints.find((c) => c.seq === head(later).seq) as Checkpoint;
    b.checkpoints = [borrowed];
    const message = `✘ the audit log ends at seq ${head(b).seq}, but checkpoint #${borrowed.id} (seq ${borrowed.seq}, signed by bob at ${borrowed.at}) covers up to seq ${borrowed.seq}`;
    const r = await cli(s.ws, ['verify', write(s.ws, 'borrowed', b), ...pins], 1);
    expect(r.stdout).toMatch(/^BROKEN: /);
    expect(r.stdout).toContain(message);
    await refusedImport('borrowed', b, 1);
  });

  it("(6) another bundle's signed head checkpoint, the chain renumbered to end at its seq: BROKEN", async () => {
    const b = clone();
    stripSignatures(b);
    changeAmount(b);
    const borrowed = later.checkpoints.find((c) => c.seq === head(later).seq) as Checkpoint;
    rechain(b, { firstSeq: borrowed.seq - (b.audit.length - 1) });
    b.checkpoints = [borrowed];
    expect(head(b).seq).toBe(borrowed.seq);
    const message = `✘ entry seq ${borrowed.seq} hashes to ${head(b).hash.slice(0, 12)}…, but checkpoint #${borrowed.id} (seq ${borrowed.seq}, signed by bob at ${borrowed.at}) signed ${borrowed.hash.slice(0, 12)}…: the log up to seq ${borrowed.seq} is not the one that was signed`;
    const r = await cli(s.ws, ['verify', write(s.ws, 'borrowed-renumbered', b)], 1);
    expect(r.stdout).toContain(message);
    await refusedImport('borrowed-renumbered', b, 1);
  });
});

describe('import', () => {
  it('stores the genuine archive, trusted by the registry, and then refuses it as already there', async () => {
    const file = join(reviewer.dir, 'genuine.bfr');
    writeFileSync(file, forgedArchive(archive, archive.bundle, {}));
    const r = await cli(reviewer, ['import', file]);
    expect(r.stdout).toContain(`Imported run ${s.runId} from ${file} for review (`);
    expect(r.stdout).toContain('verified INTACT, head signed, signed off by alice (lead).');
    expect(r.stdout).toContain(`trust: identities registered in ${reviewer.db}: alice (lead), bob (operator)`);
    const again = await cli(reviewer, ['import', file], 2);
    expect(again.stderr).toContain(`run "${s.runId}" already exists in ${reviewer.db}`);
  });
});
