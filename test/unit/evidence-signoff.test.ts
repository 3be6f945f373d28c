import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../shared/canonicalJson.ts';
import { GateError, InputError } from '../../shared/errors.ts';
import type { Job, Plan } from '../../shared/schemas.ts';
import { createFileKeyVault } from '../../electron/engine/evidence/fileVault.ts';
import { fingerprint, generateKeys, publicKeyPem, signText, verifyText } from '../../electron/engine/evidence/keys.ts';
import { evidenceRepos } from '../../electron/engine/evidence/repos.ts';
import { checkRequest, readSignatureFile, signRequest, type SignoffRequest } from '../../electron/engine/evidence/signoff.ts';
import { buildSignoffRequest } from '../../electron/engine/evidence/signoffRequest.ts';
import type { UnlockedIdentity } from '../../electron/engine/evidence/vault.ts';
import { jobHash, planHash } from '../../electron/engine/plan/hash.ts';
import { checkExecutionGates } from '../../electron/engine/runbook/gates.ts';
import { signoffGate } from '../../electron/engine/runbook/signoffGate.ts';
import type { PreparedPlan } from '../../electron/engine/runbook/prepare.ts';
import { openStore, type Store } from '../../electron/engine/store/index.ts';
import { jobSchema, planSchema } from '../../shared/schemas.ts';

let dir: string;
let store: Store;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'evidence-signoff-'));
  store = openStore(':memory:', { clock: () => new Date('2026-11-30T12:00:00.000Z') });
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const PASS = 'correct horse battery staple';
function identity(name: string, role: 'lead' | 'operator', register = true): UnlockedIdentity {
  const vault = createFileKeyVault({ dir, passphrase: () => PASS });
  const { privateKey } = generateKeys();
  const pem = publicKeyPem(privateKey);
  vault.save({ name, role, publicKeyPem: pem, fingerprint: fingerprint(pem) }, privateKey);
  if (register) evidenceRepos(store).identities.register({ name, role, publicKeyPem: pem, actor: 'admin' });
  return vault.unlock(name);
}

describe('the file key vault (scrypt + AES-256-GCM)', () => {
  it('keeps the private key encrypted and unlocks it with the passphrase only', () => {
    const alice = identity('alice', 'lead');
    const file = join(dir, 'alice.key');
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('PRIVATE KEY');
    expect(JSON.parse(text)).toMatchObject({
      format: 'backfill-runbook/private-key@1',
      name: 'alice',
      role: 'lead',
      kdf: { name: 'scrypt', N: 32768, r: 8, p: 1 },
      cipher: { name: 'aes-256-gcm' },
    });
    expect(verifyText(alice.identity.publicKeyPem, 'hello', signText(alice.privateKey, 'hello'))).toBe(true);
    const wrong = createFileKeyVault({ dir, passphrase: () => 'not the passphrase' });
    expect(() => wrong.unlock('alice')).toThrow(InputError);
    expect(() => wrong.unlock('alice')).toThrow(`the passphrase does not unlock alice's key in ${file} (or the file was altered)`);
  });

  it.each<[string, (text: string) => string]>([
    ['a role promoted by hand', (t) => t.replace('"role": "lead"', '"role": "operator"')],
    [
      'a swapped public key',
      (t) => t.replace(/"publicKeyPem": "[^"]+"/, `"publicKeyPem": ${JSON.stringify(publicKeyPem(generateKeys().publicKey))}`),
    ],
  ])('refuses to unlock a key file with %s', (_case, edit) => {
    identity('alice', 'lead', false);
    const file = join(dir, 'alice.key');
    writeFileSync(file, edit(readFileSync(file, 'utf8')));
    expect(() => createFileKeyVault({ dir, passphrase: () => PASS }).unlock('alice')).toThrow(
      `the passphrase does not unlock alice's key in ${file} (or the file was altered)`,
    );
  });

  it('never overwrites a key, and wants a real passphrase', () => {
    identity('alice', 'lead', false);
    const { privateKey } = generateKeys();
    const pem = publicKeyPem(privateKey);
    const vault = createFileKeyVault({ dir, passphrase: () => PASS });
    expect(() => vault.save({ name: 'alice', role: 'lead', publicKeyPem: pem, fingerprint: fingerprint(pem) }, privateKey)).toThrow(
      `a private key for alice already exists at ${join(dir, 'alice.key')}: it is never overwritten`,
    );
    const short = createFileKeyVault({ dir, passphrase: () => 'short' });
    expect(() => short.save({ name: 'bob', role: 'lead', publicKeyPem: pem, fingerprint: fingerprint(pem) }, privateKey)).toThrow(
      'the passphrase is too short (5 characters): use at least 8',
    );
  });
});

const job: Job = jobSchema.parse({
  name: 'order-daily-mart',
  unit: 'day',
  timezone: 'UTC',
  classification: { billing: true, external_partner: false, downstream: [] },
  source: { connection: 'w', query: 'select 1 where :partition_start < :partition_end' },
  target: { connection: 'w', table: 'mart.t', partition_column: 'd', key: ['d'] },
  write_mode: 'overwrite-partition',
  validation: [],
});
const plan = (reason: string): Plan =>
  planSchema.parse({
    request_id: 'bf-1',
    reason,
    job: job.name,
    range: { from: '2026-05-01', to: '2026-05-03' },
    write_mode: 'overwrite-partition',
    requested_by: 'carol',
  });

function dryRunOf(p: Plan): SignoffRequest {
  const hash = planHash(p);
  store.plans.save({ planHash: hash, requestId: p.request_id, jobName: job.name, plan: p });
  store.evidence.add({
    planHash: hash,
    kind: 'dry-run',
    body: { jobHash: jobHash(job), summary: '2 daily partitions', tier: 'manual', partitions: [] },
  });
  return buildSignoffRequest(store, { planHash: hash, job, operator: 'bob' });
}

function prepared(p: Plan): PreparedPlan {
  return {
    plan: p,
    planHash: planHash(p),
    job,
    jobHash: jobHash(job),
    partitions: [],
    tier: 'manual',
    tierReasons: ['billing data'],
    flags: [],
    summary: '',
  };
}
const gate = (p: Plan, operator: string) => signoffGate({ prepared: prepared(p), store, config: { connections: {} } as never, operator });

describe('sign-off files', () => {
  it('round-trips: the request checks, the signature verifies, and one changed byte is named', () => {
    const alice = identity('alice', 'lead');
    const request = dryRunOf(plan('refund bug'));
    expect(() => checkRequest(request, 'req.json')).not.toThrow();
    const sig = signRequest(request, alice, 'ok', new Date('2026-11-30T13:00:00.000Z'));
    expect(sig.signedText).toBe(canonicalJson(sig.statement));
    expect(readSignatureFile(JSON.stringify(sig), 'sig.json').statement).toEqual({
      purpose: 'backfill-runbook/signoff@1',
      requestId: 'bf-1',
      planHash: request.planHash,
      impactHash: request.impactHash,
      jobHash: request.jobHash,
      comment: 'ok',
      signer: 'alice',
      signerKey: alice.identity.fingerprint,
      at: '2026-11-30T13:00:00.000Z',
    });
    const edited = JSON.stringify({
      ...sig,
      statement: { ...sig.statement, comment: 'OK' },
      signedText: canonicalJson({ ...sig.statement, comment: 'OK' }),
    });
    expect(() => readSignatureFile(edited, 'sig.json')).toThrow(
      `sig.json: the signature does not verify against alice's key ${alice.identity.fingerprint.slice(0, 16)}: the file was altered after signing`,
    );
  });

  it.each<[string, (r: SignoffRequest) => SignoffRequest, string]>([
    ['an edited plan', (r) => ({ ...r, plan: { ...(r.plan as object), reason: 'other' } }), 'req.json: the plan hashes to'],
    [
      'an edited dry run',
      (r) => ({ ...r, impact: { ...r.impact, bodyJson: r.impact.bodyJson.replace('2 daily', '3 daily') } }),
      'req.json: the dry-run evidence hashes to',
    ],
    ['an edited job', (r) => ({ ...r, job: { ...(r.job as object), write_mode: 'upsert' } }), 'req.json: the job hashes to'],
  ])('refuses to sign a request with %s', (_case, edit, message) => {
    const request = edit(dryRunOf(plan('refund bug')));
    expect(() => checkRequest(request, 'req.json')).toThrow(message);
  });
});

describe('the four-eyes gate (manual tier)', () => {
  const importSig = (signer: UnlockedIdentity, request: SignoffRequest) =>
    evidenceRepos(store).signoffs.record(signRequest(request, signer, 'ok', new Date()), 'bob');

  it('passes with a registered lead who is not the operator', () => {
    const request = dryRunOf(plan('refund bug'));
    importSig(identity('alice', 'lead'), request);
    expect(gate(plan('refund bug'), 'bob@host')).toEqual([]);
  });

  it('does not apply below the manual tier', () => {
    expect(
      signoffGate({
        prepared: { ...prepared(plan('x')), tier: 'semi-auto' },
        store,
        config: { connections: {} } as never,
        operator: 'bob',
      }),
    ).toEqual([]);
  });

  it.each<[string, () => string, RegExp]>([
    [
      'none on record',
      () => 'bob',
      /^lead sign-off: manual tier needs a lead's sign-off, and none is on record for plan [0-9a-f]{12}… \(request bf-1\)/,
    ],
    [
      'the operator’s own',
      () => (importSig(identity('alice', 'lead'), dryRunOf(plan('refund bug'))), 'alice@laptop'),
      /does not count: alice is the operator executing this run; four eyes need a lead other than the operator$/,
    ],
    [
      'an operator’s, not a lead’s',
      () => (importSig(identity('dave', 'operator'), dryRunOf(plan('refund bug'))), 'bob'),
      /does not count: dave is registered as an operator, not a lead$/,
    ],
    [
      'an unregistered signer',
      () => (importSig(identity('mallory', 'lead', false), dryRunOf(plan('refund bug'))), 'bob'),
      /does not count: mallory is not a registered identity in this workspace \(key [0-9a-f]{16}\)/,
    ],
    [
      'an older version of the plan',
      () => {
        importSig(identity('alice', 'lead'), dryRunOf(plan('first draft')));
        dryRunOf(plan('refund bug'));
        return 'bob';
      },
      /^lead sign-off: the sign-off by alice \(signed [^)]+\) is for an older version of plan bf-1 \(plan [0-9a-f]{12}…\); the plan about to run is [0-9a-f]{12}…: it changed after it was signed/,
    ],
  ])('refuses %s', (_case, arrange, message) => {
    const operator = arrange();
    if (!store.plans.get(planHash(plan('refund bug')))) dryRunOf(plan('refund bug'));
    const reasons = gate(plan('refund bug'), operator) as string[];
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(message);
  });

  it('refuses a sign-off whose row was re-signed with another key under the lead’s name', async () => {
    identity('alice', 'lead');
    const request = dryRunOf(plan('refund bug'));
    const mallory = identity('mallory', 'lead', false);
    const forged = signRequest(request, { ...mallory, identity: { ...mallory.identity, name: 'alice' } }, 'ok', new Date());
    evidenceRepos(store).signoffs.record(forged, 'bob');
    await expect(
      checkExecutionGates({ prepared: prepared(plan('refund bug')), store, config: { connections: {} } as never, operator: 'bob' }, [
        signoffGate,
      ]),
    ).rejects.toThrow(GateError);
    expect((gate(plan('refund bug'), 'bob') as string[])[0]).toMatch(
      new RegExp(
        `does not count: it was made with key ${mallory.identity.fingerprint.slice(0, 16)}, which is not alice's registered key [0-9a-f]{16} \\(an unregistered key\\)$`,
      ),
    );
  });
});
