/**
 * Four eyes on a real PostgreSQL: a manual-tier run is refused (exit 4) without a valid lead
 * sign-off — none, the operator's own, one for an older plan, one by an unregistered key — and
 * runs with one. Then the note, its verification, the signature checked by openssl alone, and
 * an archive reviewed in another database.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTE_SECTIONS } from '../../electron/engine/evidence/note/model.ts';
import { cli, makeEvidenceWorkspace, NO_CANARY, RANGE } from '../support/evidenceRun.ts';
import type { TestDatabase } from '../support/pg.ts';
import { ensureIdentity, requestSignoff, signRequest } from '../support/signoff.ts';
import { makeWorkspace, type Workspace } from '../support/workspace.ts';

let db: TestDatabase;
let ws: Workspace;
const P = ['--passphrase-env', 'BACKFILL_TEST_PASSPHRASE'];

beforeAll(async () => {
  ({ db, ws } = await makeEvidenceWorkspace('ev_signoff'));
  await ensureIdentity(ws, 'alice', 'lead');
  await ensureIdentity(ws, 'bob', 'operator');
});
afterAll(async () => {
  await db?.drop();
});

const run = (runId: string, extra: string[] = []) => ['order-daily-mart', ...RANGE, ...NO_CANARY, '--run-id', runId, ...extra];
const planHashOf = (request: string) => (JSON.parse(readFileSync(request, 'utf8')) as { planHash: string }).planHash;

describe('what a lead approves, restated', () => {
  it('the request file carries it, and `sign` recomputes it from the hashed plan, job and dry run', async () => {
    await cli(ws, run('bf-restated', ['--reason', 'amounts 10% short', '--dry-run']));
    const file = await requestSignoff(ws, 'bf-restated');
    const request = JSON.parse(readFileSync(file, 'utf8')) as {
      approves: { summary: string; downstream: string[]; change: { added: number } };
    };
    expect(request.approves).toMatchObject({
      summary: '5 daily partitions, 2026-05-01 to 2026-05-05 inclusive',
      downstream: ['dashboard.revenue_weekly'],
    });
    expect(request.approves.change.added).toBeGreaterThan(0);
    const r = await cli(ws, ['sign', file, '--identity', 'alice', ...P, '--comment', 'ok']);
    expect(r.stderr).toContain('Request bf-restated: amounts 10% short');
    expect(r.stderr).toMatch(/Change by key: \d+ added, 0 removed, 0 changed by \(order_date, customer_id\)/);
    expect(r.stderr).toContain('Downstream to notify: dashboard.revenue_weekly');
    expect(r.stderr).toContain('No snapshot on record');
  });
});

describe('the four-eyes gate refuses a manual-tier run (exit 4)', () => {
  it('with no sign-off on record', async () => {
    await cli(ws, run('bf-none', ['--dry-run']));
    const r = await cli(ws, run('bf-none', ['--operator', 'bob']), 4);
    const hash = planHashOf(await requestSignoff(ws, 'bf-none'));
    expect(r.stderr).toContain(
      `lead sign-off: manual tier needs a lead's sign-off, and none is on record for plan ${hash.slice(0, 12)}… (request bf-none): ` +
        'export a request with `run-backfill signoff request --run-id bf-none > req.json`',
    );
    expect(r.stderr).toContain('refused: 1 gate(s) block this run');
  });

  it("with the operator's own sign-off", async () => {
    await cli(ws, run('bf-own', ['--dry-run']));
    await cli(ws, ['signoff', 'import', await signRequest(ws, await requestSignoff(ws, 'bf-own'), 'alice')]);
    const r = await cli(ws, run('bf-own', ['--operator', 'alice']), 4);
    expect(r.stderr).toMatch(
      /lead sign-off: the sign-off by alice \(signed [^)]+\) does not count: alice is the operator executing this run; four eyes need a lead other than the operator/,
    );
  });

  it('with a sign-off of an older version of the plan', async () => {
    await cli(ws, run('bf-old', ['--reason', 'first draft', '--dry-run']));
    const oldHash = planHashOf(await requestSignoff(ws, 'bf-old'));
    await cli(ws, ['signoff', 'import', await signRequest(ws, await requestSignoff(ws, 'bf-old'), 'alice')]);
    await cli(ws, run('bf-old', ['--reason', 'first draft, one character changeD', '--dry-run']));
    const newHash = planHashOf(await requestSignoff(ws, 'bf-old'));
    expect(newHash).not.toBe(oldHash);
    const r = await cli(ws, run('bf-old', ['--reason', 'first draft, one character changeD', '--operator', 'bob']), 4);
    expect(r.stderr).toMatch(
      new RegExp(
        `lead sign-off: the sign-off by alice \\(signed [^)]+\\) is for an older version of plan bf-old \\(plan ${oldHash.slice(0, 12)}…\\); ` +
          `the plan about to run is ${newHash.slice(0, 12)}…: it changed after it was signed — ask for a new sign-off of this version`,
      ),
    );
  });

  it('with a sign-off by a key not registered in this workspace', async () => {
    const elsewhere = makeWorkspace('ev_mallory', { BACKFILL_TEST_PASSPHRASE: 'another long passphrase' });
    await cli(elsewhere, ['identity', 'create', '--name', 'mallory', '--role', 'lead', ...P]);
    await cli(ws, run('bf-mallory', ['--dry-run']));
    const request = await requestSignoff(ws, 'bf-mallory');
    const signed = await cli(elsewhere, ['sign', request, '--identity', 'mallory', ...P, '--comment', 'trust me']);
    const sig = join(ws.dir, 'mallory.sig.json');
    writeFileSync(sig, signed.stdout);
    const imported = await cli(ws, ['signoff', 'import', sig]);
    expect(imported.stdout).toMatch(
      /Recorded sign-off #\d+ by mallory of plan [0-9a-f]{12}… \(bf-mallory\); mallory is not registered here: it will not count until their public key is registered as a lead\./,
    );
    const r = await cli(ws, run('bf-mallory', ['--operator', 'bob']), 4);
    expect(r.stderr).toMatch(
      /lead sign-off: the sign-off by mallory \(signed [^)]+\) does not count: mallory is not a registered identity in this workspace \(key [0-9a-f]{16}\)/,
    );
  });

  it('with a signature file altered after signing (refused at import, exit 2)', async () => {
    await cli(ws, run('bf-edit', ['--dry-run']));
    const sig = await signRequest(ws, await requestSignoff(ws, 'bf-edit'), 'alice', 'ok for 5 days');
    writeFileSync(sig, readFileSync(sig, 'utf8').replace('ok for 5 days', 'ok for 9 days'));
    const r = await cli(ws, ['signoff', 'import', sig], 2);
    expect(r.stderr).toContain(`${sig}: signedText is not the canonical form of statement: one of them was edited after signing`);
  });
});

describe('a signed manual-tier run', () => {
  it('executes with a lead sign-off and signs the chain head with the operator key', async () => {
    await cli(ws, run('bf-good', ['--dry-run']));
    const request = await requestSignoff(ws, 'bf-good');
    await cli(ws, ['signoff', 'import', await signRequest(ws, request, 'alice', 'dry run shows +0 rows: safe')]);
    const r = await cli(ws, run('bf-good', ['--operator', 'bob', ...P]));
    expect(r.stdout).toMatch(/Run bf-good succeeded: 5 published, 0 failed, 0 pending/);
    expect(r.stdout).toMatch(/Audit chain head seq \d+ signed by bob \(checkpoint #1\)\./);
    const verify = await cli(ws, ['verify']);
    expect(verify.stdout).toMatch(new RegExp(`^INTACT: ${ws.db} — \\d+ entries, head seq \\d+ [0-9a-f]{64}`));
    expect(verify.stdout).toMatch(/✔ signed checkpoint: seq \d+ by bob/);
  });

  it('exports a note in every format, and the bundle verifies with and without pinned keys', async () => {
    const md = join(ws.dir, 'note.md');
    const json = join(ws.dir, 'note.json');
    await cli(ws, ['export', '--run-id', 'bf-good', '--format', 'md', '--out', md]);
    await cli(ws, ['export', '--run-id', 'bf-good', '--format', 'json', '--out', json, '--identity', 'bob', ...P]);
    const text = readFileSync(md, 'utf8');
    for (const heading of NOTE_SECTIONS) expect(text).toContain(`## ${heading}`);
    expect(text).toMatch(/- \*\*Signed off by:\*\* alice \(lead\) at 20\d\d-/);
    expect(text).toContain('- **Executed by:** bob');
    expect(text).toContain('- [x] **Lead sign-off**');
    expect(text).toContain('“dry run shows +0 rows: safe” — signature verified');
    expect(text).toContain('- **Stop count:** 0');

    const plain = await cli(ws, ['verify', json]);
    expect(plain.stdout).toMatch(
      /^INTACT: .*note\.json — audit seq \d+–\d+, head [0-9a-f]{64}, head signed by bob; signed off by alice \(lead\)/,
    );
    expect(plain.stdout).toContain(`trust: identities registered in ${ws.db}: alice (lead), bob (operator)`);
    for (const name of ['alice', 'bob'])
      await cli(ws, ['identity', 'export-public', '--name', name, '--out', join(ws.dir, `${name}.pub.pem`)]);
    const pinned = await cli(ws, [
      'verify',
      json,
      '--trust',
      join(ws.dir, 'alice.pub.pem'),
      '--trust',
      join(ws.dir, 'bob.pub.pem'),
      '--json',
    ]);
    const report = JSON.parse(pinned.stdout.trim()) as {
      ok: boolean;
      signedHead: boolean;
      trust: string;
      signatures: { what: string; signer: string; valid: boolean }[];
    };
    expect(report).toMatchObject({ ok: true, signedHead: true, trust: 'pinned' });
    expect(report.signatures.map((s) => [s.what.split(' ')[0], s.signer, s.valid])).toEqual([
      ['sign-off', 'alice', true],
      ['checkpoint', 'bob', true],
      ['checkpoint', 'bob', true],
    ]);
    // Pinning only alice: bob's checkpoints no longer count, so nothing vouches for the head (exit 4), and the report says why.
    const onlyAlice = await cli(ws, ['verify', json, '--trust', join(ws.dir, 'alice.pub.pem')], 4);
    expect(onlyAlice.stdout).toMatch(/^UNTRUSTED: /);
    expect(onlyAlice.stdout).toMatch(
      /✘ checkpoint #\d+ \(seq \d+, signed by bob at [^)]+\) is signed with key [0-9a-f]{16}: bob's key [0-9a-f]{16} is not among the keys pinned with --trust/,
    );
  });

  it("signs in a way openssl verifies against the exported public key (README's commands)", async () => {
    const request = await requestSignoff(ws, 'bf-good');
    const sig = await signRequest(ws, request, 'alice', 'openssl check');
    const sh = (script: string) =>
      execFileSync('bash', ['-c', script], { cwd: ws.dir, encoding: 'utf8', env: { ...process.env, ...ws.env } });
    // Exactly the commands of README.md, "Verifying a signature without this program".
    sh(
      `run() { node ${join(import.meta.dirname, '../../bin/run-backfill.mjs')} "$@"; }; run identity export-public --name alice > alice.pub.pem`,
    );
    sh(`jq -j .signedText ${sig} > msg && jq -r .signature ${sig} | base64 -d > sig.bin`);
    expect(sh('openssl pkeyutl -verify -pubin -inkey alice.pub.pem -rawin -in msg -sigfile sig.bin')).toContain(
      'Signature Verified Successfully',
    );
    const fp = sh('openssl pkey -pubin -in alice.pub.pem -outform DER | sha256sum').split(' ')[0];
    expect((JSON.parse(readFileSync(sig, 'utf8')) as { statement: { signerKey: string } }).statement.signerKey).toBe(fp);
    // One changed byte of the statement: openssl refuses too.
    writeFileSync(join(ws.dir, 'msg'), readFileSync(join(ws.dir, 'msg'), 'utf8').replace('openssl check', 'openssl checK'));
    expect(sh('openssl pkeyutl -verify -pubin -inkey alice.pub.pem -rawin -in msg -sigfile sig.bin 2>&1 || echo "exit $?"')).toMatch(
      /Signature Verification Failure\n(.*\n)*exit 1/,
    );
  });

  it('archives the run and imports it into another database for offline review', async () => {
    const archive = join(ws.dir, 'bf-good.bfr');
    await cli(ws, ['archive', '--run-id', 'bf-good', '--out', archive, '--identity', 'bob', ...P]);
    const verified = await cli(ws, ['verify', archive]);
    expect(verified.stdout).toMatch(/^INTACT: .*bf-good\.bfr — audit seq \d+–\d+, head [0-9a-f]{64}, head signed/);
    const reviewer = makeWorkspace('ev_review');
    const imported = await cli(reviewer, [
      'import',
      archive,
      '--trust',
      join(ws.dir, 'bob.pub.pem'),
      '--trust',
      join(ws.dir, 'alice.pub.pem'),
    ]);
    expect(imported.stdout).toContain(`Imported run bf-good from ${archive} for review (`);
    expect(imported.stdout).toContain('verified INTACT, head signed, signed off by alice (lead).');
    const status = await cli(reviewer, ['status', '--run-id', 'bf-good']);
    expect(status.stdout).toContain('Run bf-good  [succeeded]');
    expect(status.stdout).toContain('5/5 published');
    const note = await cli(reviewer, ['export', '--run-id', 'bf-good', '--format', 'md']);
    expect(note.stdout).toContain('- **Executed by:** bob');
    expect((await cli(reviewer, ['verify'])).stdout).toMatch(/^INTACT/);
    const again = await cli(
      reviewer,
      ['import', archive, '--trust', join(ws.dir, 'bob.pub.pem'), '--trust', join(ws.dir, 'alice.pub.pem')],
      2,
    );
    expect(again.stderr).toContain(`run "bf-good" already exists in ${reviewer.db}`);
  });
});
