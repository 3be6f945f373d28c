import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../shared/canonicalJson.ts';
import { InputError } from '../../shared/errors.ts';
import { readEvidenceFile, verifyEvidence } from '../../electron/engine/evidence/evidenceFile.ts';
import { buildArchive, importArchive, ledgerProblems, readArchive } from '../../electron/engine/evidence/archive.ts';
import type { NoteBundle } from '../../electron/engine/evidence/bundle.ts';
import { exportBundle } from '../../electron/engine/evidence/exportNote.ts';
import { fingerprint, generateKeys, publicKeyPem } from '../../electron/engine/evidence/keys.ts';
import { NOTE_SECTIONS } from '../../electron/engine/evidence/note/model.ts';
import { renderNote } from '../../electron/engine/evidence/note/render.ts';
import { evidenceRepos } from '../../electron/engine/evidence/repos.ts';
import { signRequest, type SignoffRequest } from '../../electron/engine/evidence/signoff.ts';
import type { UnlockedIdentity } from '../../electron/engine/evidence/vault.ts';
import { registryTrust } from '../../electron/engine/evidence/trust.ts';
import { verifyBundle } from '../../electron/engine/evidence/verifyBundle.ts';
import { openStore, type Store } from '../../electron/engine/store/index.ts';

let nowMs = 0;
const clock = () => new Date((nowMs += 1000));
let store: Store;
const H = (c: string) => c.repeat(64);

function key(name: string, role: 'lead' | 'operator'): UnlockedIdentity {
  const { privateKey } = generateKeys();
  const pem = publicKeyPem(privateKey);
  return { identity: { name, role, publicKeyPem: pem, fingerprint: fingerprint(pem) }, privateKey };
}
const alice = key('alice', 'lead');
const bob = key('bob', 'operator');

/** A finished run with a stop and a resume, a failed attempt with duplicate keys, and evidence. */
function finishedRun(s: Store): void {
  const { identities, signoffs } = evidenceRepos(s, clock);
  for (const k of [alice, bob])
    identities.register({ name: k.identity.name, role: k.identity.role, publicKeyPem: k.identity.publicKeyPem, actor: 'admin' });
  s.plans.save({
    planHash: H('a'),
    requestId: 'bf-1',
    jobName: 'mart',
    plan: { request_id: 'bf-1', reason: 'refund | mapping bug', range: { from: '2026-05-01', to: '2026-05-03' } },
  });
  const dry = s.evidence.add({
    planHash: H('a'),
    kind: 'dry-run',
    body: { jobHash: H('b'), summary: '2 daily partitions', partitions: [{ change: { rows: 5 } }] },
  });
  const request = { requestId: 'bf-1', planHash: H('a'), impactHash: dry.bodySha256, jobHash: H('b') } as SignoffRequest;
  signoffs.record(signRequest(request, alice, 'looks right', clock()), 'bob');
  s.runs.create({
    runId: 'bf-1',
    jobName: 'mart',
    planHash: H('a'),
    jobHash: H('b'),
    kind: 'execute',
    tier: 'manual',
    requestedBy: 'carol',
    executedBy: 'bob',
    actor: 'bob',
    partitions: [{ key: '2026-05-01' }, { key: '2026-05-02' }],
  });
  s.runs.setStatus('bf-1', 'running', { actor: 'bob', event: 'run.started' });
  s.partitions.transition('bf-1', '2026-05-01', 'running', {}, 'bob');
  s.partitions.transition('bf-1', '2026-05-01', 'published', { rowsWritten: 30, checksum: 'md5:1' }, 'bob');
  s.runs.setStatus('bf-1', 'paused', { actor: 'bob', haltReason: 'stopped by the operator' });
  s.runs.setStatus('bf-1', 'running', { actor: 'bob', event: 'run.resumed' });
  s.partitions.transition('bf-1', '2026-05-02', 'running', {}, 'bob');
  s.partitions.transition(
    'bf-1',
    '2026-05-02',
    'pending',
    { error: 'partition 2026-05-02 did not validate, rolled back: 3 duplicate key(s) on (d) in partition 2026-05-02' },
    'bob',
  );
  s.partitions.transition('bf-1', '2026-05-02', 'running', {}, 'bob');
  s.partitions.transition('bf-1', '2026-05-02', 'published', { rowsWritten: 30, checksum: 'md5:2' }, 'bob');
  s.evidence.add({
    runId: 'bf-1',
    planHash: H('a'),
    kind: 'reconciliation',
    body: {
      ok: true,
      partitions: [
        { partition: { key: '2026-05-01' }, ok: true, checks: [{ diffRatio: 0.001 }], targetCount: 30, markedRows: 30, problems: [] },
      ],
    },
  });
  s.runs.setStatus('bf-1', 'succeeded', { actor: 'bob' });
}

beforeEach(() => {
  nowMs = Date.parse('2026-11-30T12:00:00.000Z');
  store = openStore(':memory:', { clock });
  finishedRun(store);
});
afterEach(() => store.close());

/** The workspace's own registry: alice (lead) and bob (operator). */
const registered = () => registryTrust([alice.identity, bob.identity], 'the test ledger');

const exported = (signer?: UnlockedIdentity): NoteBundle =>
  JSON.parse(JSON.stringify(exportBundle(store, 'bf-1', { format: 'json', actor: 'bob', signer }))) as NoteBundle;

describe('the incident-note bundle', () => {
  it('is INTACT only with the head signed by a registered key', () => {
    const unsigned = verifyBundle(exported(), registered());
    expect(unsigned).toMatchObject({ verdict: 'untrusted', ok: false, signedHead: false, broken: [] });
    expect(unsigned.untrusted).toEqual([
      expect.stringMatching(
        /^the chain head \(seq \d+, note\.exported\) is not signed by any key — registered or not: a bundle rebuilt from scratch/,
      ),
    ]);
    const signed = verifyBundle(exported(bob), registered());
    expect(signed).toMatchObject({
      verdict: 'intact',
      ok: true,
      signedHead: true,
      problems: [],
      signoff: { required: true, by: 'alice (lead)' },
    });
    expect(signed.signatures.map((s) => [s.what.split(' ')[0], s.signer, s.role, s.valid])).toEqual([
      ['sign-off', 'alice', 'lead', true],
      ['checkpoint', 'bob', 'operator', true],
    ]);
  });

  it('is NOT SIGNED OFF for a manual-tier execution without a sign-off, and needs none for a dry run', () => {
    const bare = openStore(':memory:', { clock });
    const { identities } = evidenceRepos(bare, clock);
    for (const k of [alice, bob])
      identities.register({ name: k.identity.name, role: k.identity.role, publicKeyPem: k.identity.publicKeyPem, actor: 'admin' });
    bare.plans.save({ planHash: H('a'), requestId: 'bf-1', jobName: 'mart', plan: { request_id: 'bf-1' } });
    for (const [runId, kind] of [
      ['bf-exec', 'execute'],
      ['bf-dry', 'dry-run'],
    ] as const) {
      bare.runs.create({
        runId,
        jobName: 'mart',
        planHash: H('a'),
        jobHash: H('b'),
        kind,
        tier: 'manual',
        executedBy: 'bob',
        actor: 'bob',
        partitions: [{ key: 'p1' }],
      });
      bare.runs.setStatus(runId, 'succeeded', { actor: 'bob' });
    }
    const judge = (runId: string) =>
      verifyBundle(JSON.parse(JSON.stringify(exportBundle(bare, runId, { format: 'json', actor: 'bob', signer: bob }))), registered());
    const executed = judge('bf-exec');
    expect(executed).toMatchObject({
      verdict: 'not-signed-off',
      ok: false,
      signedHead: true,
      broken: [],
      untrusted: [],
      signoff: { required: true, by: null },
    });
    expect(executed.problems).toEqual([
      `this manual-tier run executed, but the bundle carries no sign-off of its plan ${H('a').slice(0, 12)}…: a lead's sign-off is required (four eyes), and without one the note proves no approval`,
    ]);
    expect(judge('bf-dry')).toMatchObject({ verdict: 'intact', signoff: { required: false, by: null } });
    bare.close();
  });

  it.each<[string, (b: NoteBundle) => void, string]>([
    [
      'the manifest edited',
      (b) => void ((b.manifest.sections.partitions ?? [])[0]!.sha256 = H('0')),
      'the manifest was changed after export: it hashes to',
    ],
    [
      'entries cut from the start of the slice',
      (b) => void b.audit.splice(0, 2),
      'the audit slice starts at seq 5, but the note was exported from seq 3: seq 3–4 were removed from its start',
    ],
    ['a checkpoint removed', (b) => void b.checkpoints.splice(0, 1), ''],
    ['the export header edited', (b) => void (b.exportedBy = 'carol'), 'exportedAt/exportedBy ('],
    [
      'a registered key replaced',
      (b) => void (b.identities[0]!.publicKeyPem = publicKeyPem(generateKeys().publicKey)),
      'identity alice: its public key does not hash to its fingerprint',
    ],
    [
      'a run field edited',
      (b) => void ((b.run[0] as { executedBy: string }).executedBy = 'alice'),
      'run bf-1 (run[0]) was changed after export: field executedBy',
    ],
    [
      'an identity added',
      (b) => void b.identities.push({ ...b.identities[0]!, name: 'zed' }),
      'identity zed in identities[] was not in the note when it was exported: it was added',
    ],
  ])('names %s', (_case, tamper, message) => {
    const bundle = exported(bob);
    tamper(bundle);
    const result = verifyBundle(bundle, registered());
    if (message === '') {
      // The last checkpoint is outside the chain: nothing shows it was removed, but the head is no longer signed.
      expect(result).toMatchObject({ verdict: 'untrusted', ok: false, signedHead: false, broken: [] });
      return;
    }
    expect(result.ok).toBe(false);
    expect(
      result.problems.filter((p) => p.startsWith(message)),
      result.problems.join('\n'),
    ).toHaveLength(1);
  });

  it('renders the same note in Markdown and HTML, with every section, escaped', () => {
    const bundle = exported(bob);
    const md = renderNote(bundle, 'md');
    const html = renderNote(bundle, 'html');
    for (const heading of NOTE_SECTIONS) {
      expect(md).toContain(`\n## ${heading}\n`);
      expect(html).toContain(`<h2>${heading}</h2>`);
    }
    expect(md).toContain('- **Why:** refund | mapping bug');
    expect(md).toMatch(/\n\| 2026-11-30T12:\d\d:\d\d\.000Z \| run\.paused \| bob \| running → paused \| stopped by the operator \|\n/);
    expect(md).toContain('- **Stop count:** 1');
    expect(md).toContain('- **Duplicate keys caught by validation:** 3');
    expect(md).toContain('- **Validation diff ratio (max):** 0.001');
    expect(md).toContain('- [ ] **Source snapshot taken** (missing)');
    expect(md).toMatch(/\n {2}- alice signed at 2026-11-30T12:00:\d\d\.000Z: “looks right” — signature verified \(sign-off #1\)\n/);
    expect(html).toContain('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">');
    expect(html).not.toMatch(/<script|src=|href=/);
    expect(JSON.parse(renderNote(bundle, 'json'))).toEqual(bundle);
  });
});

describe('the run archive', () => {
  it('carries the ledger rows, refuses rows that disagree with the bundle, and imports for review', async () => {
    const archive = await readArchive(
      buildArchive(store, exportBundle(store, 'bf-1', { format: 'archive', actor: 'bob', signer: bob })),
      'run.bfr',
    );
    expect(ledgerProblems(archive)).toEqual([]);
    const edited = structuredClone(archive);
    edited.ledger.partitions[0]!.rows_written = 31;
    expect(ledgerProblems(edited)).toEqual(['ledger row of partition 2026-05-01 differs from the bundle']);

    const review = openStore(':memory:', { clock });
    // Only alice registered: bob's head checkpoint is not vouched for, and importArchive itself refuses.
    const untrusted = verifyBundle(archive.bundle, registryTrust([alice.identity], 'the review ledger'));
    expect(untrusted.verdict).toBe('untrusted');
    expect(() => importArchive(review, archive, untrusted, 'auditor')).toThrow('the archive of bf-1 is UNTRUSTED, so nothing was imported');
    expect(review.runs.get('bf-1')).toBeUndefined();
    const verification = verifyBundle(archive.bundle, registered());
    expect(importArchive(review, archive, verification, 'auditor')).toEqual({ runId: 'bf-1', evidence: 2 });
    expect(review.runs.get('bf-1')).toMatchObject({ status: 'succeeded', partitionsPublished: 2, rowsWritten: 60, leaseOwner: null });
    expect(review.audit.list().at(-1)).toMatchObject({
      event: 'archive.imported',
      actor: 'auditor',
      detail: { signedHead: true, evidence: 2 },
    });
    expect(exportBundle(review, 'bf-1', { format: 'json', actor: 'auditor' })).toEqual(archive.bundle);
    expect(() => importArchive(review, archive, verification, 'auditor')).toThrow('run "bf-1" already exists in :memory:');
    review.close();
  });
});

describe('a crafted archive', () => {
  /** Every path in the archive down to `depth`, and the value there. */
  function paths(value: unknown, depth: number, at: (string | number)[] = []): (string | number)[][] {
    if (depth === 0 || value === null || typeof value !== 'object') return [at];
    const keys = Array.isArray(value) ? value.slice(0, 3).map((_, i) => i) : Object.keys(value);
    return [at, ...keys.flatMap((k) => paths((value as Record<string | number, unknown>)[k], depth - 1, [...at, k]))];
  }
  const set = (root: unknown, path: (string | number)[], value: unknown): void => {
    let node = root as Record<string | number, unknown>;
    for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
    const last = path.at(-1);
    if (last !== undefined) node[last] = value;
  };

  it('never throws anything but a refusal naming the file, and no change to the bundle verifies INTACT', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'bfr-crafted-')), 'run.bfr');
    const genuine = JSON.parse(
      gunzipSync(buildArchive(store, exportBundle(store, 'bf-1', { format: 'archive', actor: 'bob', signer: bob }))).toString('utf8'),
    ) as Record<string, unknown>;
    const replacements: unknown[] = [null, 0, -1, 1.5, '', 'x', true, [], {}, [[[[1]]]], { format: 'x' }];
    let cases = 0;
    const outcomes = new Map<string, number>();
    for (const path of paths(genuine, 5).filter((p) => p.length > 0)) {
      for (const replacement of replacements) {
        const crafted = structuredClone(genuine);
        set(crafted, path, structuredClone(replacement));
        if (canonicalJson(crafted) === canonicalJson(genuine)) continue;
        writeFileSync(file, gzipSync(JSON.stringify(crafted)));
        cases += 1;
        let outcome: string;
        try {
          outcome = verifyEvidence(file, await readEvidenceFile(file), registered()).verdict;
        } catch (err) {
          expect(err, `${path.join('.')} = ${JSON.stringify(replacement)}`).toBeInstanceOf(InputError);
          expect((err as InputError).details.file).toBe(file);
          outcome = 'refused (exit 2)';
        }
        // The only changes allowed to pass: ledger lease fields (import resets them), where and when
        // the job file was read on the original machine, and the local row id of the head's
        // checkpoint (not signed, and the chain that would name it ends before it).
        if (outcome === 'intact')
          expect(path.join('.')).toMatch(
            /^ledger\.runs\.0\.lease_|^ledger\.jobs\.0\.(source_file|updated_at)$|^bundle\.checkpoints\.0\.id$/,
          );
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    }
    console.log(`${cases} crafted archives: ${[...outcomes].map(([k, v]) => `${v} ${k}`).join(', ')}`);
    expect(cases).toBeGreaterThan(500);
  }, 120_000);
});
