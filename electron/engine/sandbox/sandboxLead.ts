/**
 * The Sandbox's own lead. Scenario 1 is the manual tier: it needs a lead's sign-off, and a
 * trainee has no lead at hand. So the Sandbox makes one, `sandbox-lead`, with a training
 * passphrase shown on screen on purpose. Four eyes still hold: the trainee executes, the
 * sandbox lead signs, and the gate checks the signature like any other.
 *
 * **Important**: this identity lives only in the Sandbox's ledger and keys folder (scenarios
 * refuse a non-sandbox config before anything here runs). A lead whose passphrase is printed
 * on screen must never exist in a real workspace.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxLeadView } from '../../../shared/contractTypes.ts';
import { createFileKeyVault, readKeyFile } from '../evidence/fileVault.ts';
import { fingerprint, generateKeys, publicKeyPem, shortFingerprint } from '../evidence/keys.ts';
import { evidenceRepos } from '../evidence/repos.ts';
import { keysDir } from '../runbook/workspace.ts';
import type { Store } from '../store/index.ts';

export const SANDBOX_LEAD = { name: 'sandbox-lead', passphrase: 'sandbox-training-only' } as const;

export interface SandboxLeadOptions {
  store: Store;
  env: NodeJS.ProcessEnv;
  /** who is recorded as registering it */
  actor: string;
}

/** Makes the sandbox lead when it is missing (key file + registered public key); says why it cannot sign otherwise. */
export function ensureSandboxLead(opts: SandboxLeadOptions): SandboxLeadView {
  const { name, passphrase } = SANDBOX_LEAD;
  const dir = keysDir(opts.store.file, opts.env);
  const vault = createFileKeyVault({ dir, passphrase: () => passphrase });
  const { identities } = evidenceRepos(opts.store);
  const registered = identities.get(name);
  if (!vault.has(name)) {
    if (registered)
      return view(
        registered.fingerprint,
        `${name} is registered with key ${shortFingerprint(registered.fingerprint)}, but that key is not in ${dir}: reset the sandbox (run-backfill sandbox reset) to start with a fresh lead`,
      );
    const { privateKey } = generateKeys();
    const pem = publicKeyPem(privateKey);
    vault.save({ name, role: 'lead', publicKeyPem: pem, fingerprint: fingerprint(pem) }, privateKey);
    const { identity } = identities.register({ name, role: 'lead', publicKeyPem: pem, actor: opts.actor, source: 'the sandbox' });
    return view(identity.fingerprint);
  }
  let key: { publicKeyPem: string; fingerprint: string };
  try {
    key = vault.unlock(name).identity;
  } catch {
    return view(null, `a key for ${name} is already in ${dir}, made with another passphrase: sign with that one, or reset the sandbox`);
  }
  if (!registered) {
    const { identity } = identities.register({
      name,
      role: 'lead',
      publicKeyPem: key.publicKeyPem,
      actor: opts.actor,
      source: join(dir, `${name}.key`),
    });
    return view(identity.fingerprint);
  }
  if (registered.fingerprint !== key.fingerprint || registered.role !== 'lead') {
    return view(
      registered.fingerprint,
      `${name} is registered here as ${registered.role} with key ${shortFingerprint(registered.fingerprint)}, not the key in ${dir}: reset the sandbox`,
    );
  }
  return view(registered.fingerprint);
}

/** The sandbox lead as it stands, without making or unlocking anything; null when it was never made. */
export function sandboxLeadStatus(store: Store, env: NodeJS.ProcessEnv): SandboxLeadView | null {
  const { name } = SANDBOX_LEAD;
  const dir = keysDir(store.file, env);
  const file = join(dir, `${name}.key`);
  const registered = evidenceRepos(store).identities.get(name);
  if (!existsSync(file)) return registered ? view(registered.fingerprint, `the key of ${name} is not in ${dir}: reset the sandbox`) : null;
  if (!registered) return view(null, `${name} is not registered in this ledger yet: load a scenario`);
  try {
    if (readKeyFile(file).fingerprint !== registered.fingerprint)
      return view(registered.fingerprint, `the key of ${name} in ${dir} is not its registered key: reset the sandbox`);
  } catch (err) {
    return view(registered.fingerprint, (err as Error).message);
  }
  return view(registered.fingerprint);
}

function view(fp: string | null, problem?: string): SandboxLeadView {
  return { name: SANDBOX_LEAD.name, passphrase: SANDBOX_LEAD.passphrase, fingerprint: fp, ...(problem ? { problem } : {}) };
}
