/**
 * The Sandbox's own lead: made once (key file beside the ledger, public key registered as a
 * lead), unlocked by the training passphrase, kept as it is on every later load, and when it
 * cannot sign the reason is said instead of a broken lead being handed out.
 */
import { existsSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileKeyVault } from '../../electron/engine/evidence/fileVault.ts';
import { fingerprint, generateKeys, publicKeyPem } from '../../electron/engine/evidence/keys.ts';
import { evidenceRepos } from '../../electron/engine/evidence/repos.ts';
import { ensureSandboxLead, SANDBOX_LEAD, sandboxLeadStatus } from '../../electron/engine/sandbox/sandboxLead.ts';
import { openStore, type Store } from '../../electron/engine/store/index.ts';

let dir: string;
let store: Store;
const keys = () => join(dir, 'keys');
const opts = () => ({ store, env: {}, actor: 'trainee@host' });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-lead-'));
  store = openStore(join(dir, 'runbook.sqlite'));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the sandbox lead', () => {
  it('does not exist until a scenario asks for it', () => {
    expect(sandboxLeadStatus(store, {})).toBeNull();
    expect(existsSync(keys())).toBe(false);
  });

  it('is made once: a registered lead whose key file, beside the ledger, opens with the training passphrase', () => {
    const made = ensureSandboxLead(opts());
    const registered = evidenceRepos(store).identities.get('sandbox-lead');
    expect(made).toEqual({ name: 'sandbox-lead', passphrase: 'sandbox-training-only', fingerprint: registered?.fingerprint });
    expect([registered?.role, registered?.registeredBy]).toEqual(['lead', 'trainee@host']);
    const unlocked = createFileKeyVault({ dir: keys(), passphrase: () => SANDBOX_LEAD.passphrase }).unlock('sandbox-lead');
    expect(unlocked.identity.fingerprint).toBe(made.fingerprint);
    // a second load keeps the same lead: a registered identity never changes key
    expect(ensureSandboxLead(opts())).toEqual(made);
    expect(sandboxLeadStatus(store, {})).toEqual(made);
    expect(store.audit.list({}).filter((e) => e.event === 'identity.registered').length).toBe(1);
  });

  it('follows BACKFILL_RUNBOOK_KEYS, like the CLI and the sign-off step', () => {
    const elsewhere = join(dir, 'elsewhere');
    ensureSandboxLead({ ...opts(), env: { BACKFILL_RUNBOOK_KEYS: elsewhere } });
    expect([existsSync(join(elsewhere, 'sandbox-lead.key')), existsSync(keys())]).toEqual([true, false]);
  });

  it('a key file left from a fresh ledger is registered again, not replaced', () => {
    const first = ensureSandboxLead(opts());
    store.close();
    unlinkSync(join(dir, 'runbook.sqlite'));
    store = openStore(join(dir, 'runbook.sqlite'));
    expect(sandboxLeadStatus(store, {})).toEqual({
      ...first,
      fingerprint: null,
      problem: 'sandbox-lead is not registered in this ledger yet: load a scenario',
    });
    expect(ensureSandboxLead(opts())).toEqual(first);
  });

  it.each<[string, () => void, RegExp]>([
    [
      'a key made with another passphrase',
      () => {
        const { privateKey } = generateKeys();
        const pem = publicKeyPem(privateKey);
        createFileKeyVault({ dir: keys(), passphrase: () => 'someone else entirely' }).save(
          { name: 'sandbox-lead', role: 'lead', publicKeyPem: pem, fingerprint: fingerprint(pem) },
          privateKey,
        );
      },
      /^a key for sandbox-lead is already in .*\/keys, made with another passphrase: sign with that one, or reset the sandbox$/,
    ],
    [
      'a registered lead whose key file is gone',
      () => {
        ensureSandboxLead(opts());
        unlinkSync(join(keys(), 'sandbox-lead.key'));
      },
      /^sandbox-lead is registered with key [0-9a-f]{16}, but that key is not in .*\/keys: reset the sandbox \(run-backfill sandbox reset\) to start with a fresh lead$/,
    ],
  ])('says why it cannot sign: %s', (_what, arrange, problem) => {
    arrange();
    expect(ensureSandboxLead(opts()).problem).toMatch(problem);
  });
});
