/** `run-backfill identity create | list | export-public | register`. */
import { InputError } from '../../../shared/errors.ts';
import { LIMITS } from '../../../shared/limits.ts';
import { readBoundedText } from '../../engine/input/boundedFile.ts';
import { checkIdentityName, checkRole, fingerprint, generateKeys, publicKeyPem, shortFingerprint } from '../../engine/evidence/keys.ts';
import { evidenceRepos } from '../../engine/evidence/repos.ts';
import type { Store } from '../../engine/store/index.ts';
import { EXIT, type ExitCode } from '../exitCodes.ts';
import type { Reporter } from '../progress.ts';
import { table } from '../tables.ts';
import { writeOutput } from './files.ts';
import { cliActor, keysDir, passphrase, vaultFor, type KeyOptions } from './keyring.ts';

export interface IdentityOptions extends KeyOptions {
  name: string;
  role: string;
  operator?: string;
}

export async function createIdentity(opts: IdentityOptions, store: Store, out: Reporter): Promise<ExitCode> {
  const name = checkIdentityName(opts.name);
  const role = checkRole(opts.role);
  const { identities } = evidenceRepos(store);
  const existing = identities.get(name);
  if (existing)
    throw new InputError(
      `${name} is already registered (${existing.role}, key ${shortFingerprint(existing.fingerprint)}): pick another --name`,
      { field: '--name', value: name },
    );
  const vault = vaultFor(store.file, opts, await passphrase(opts, `protect ${name}'s new key`, true));
  const { privateKey } = generateKeys();
  const pem = publicKeyPem(privateKey);
  vault.save({ name, role, publicKeyPem: pem, fingerprint: fingerprint(pem) }, privateKey);
  const { identity } = identities.register({ name, role, publicKeyPem: pem, actor: cliActor(opts.operator) });
  const where = opts.keyFile ?? `${keysDir(store.file)}/${name}.key`;
  out.record(
    'identity',
    { name, role, fingerprint: identity.fingerprint, keyFile: where },
    [
      `Created ${role} identity ${name}, key ${identity.fingerprint}`,
      `  private key: ${where} (scrypt + AES-256-GCM, unlocked by your passphrase)`,
      `  public key registered in ${store.file} as a trusted signer`,
      `  share it with: run-backfill identity export-public --name ${name} > ${name}.pub.pem`,
    ].join('\n'),
  );
  return EXIT.ok;
}

export function listIdentities(store: Store, out: Reporter): ExitCode {
  const list = evidenceRepos(store).identities.list();
  const vault = vaultFor(store.file, {}, '');
  out.record(
    'identities',
    { identities: list.map((i) => ({ ...i, privateKeyHere: vault.has(i.name) })) },
    list.length === 0
      ? 'No identities registered: create one with `run-backfill identity create --name NAME --role lead|operator`.'
      : table(
          ['name', 'role', 'key', 'registered', 'by', 'private key here'],
          list.map((i) => [
            i.name,
            i.role,
            shortFingerprint(i.fingerprint),
            i.registeredAt,
            i.registeredBy,
            vault.has(i.name) ? 'yes' : 'no',
          ]),
        ),
  );
  return EXIT.ok;
}

export function exportPublic(opts: { name: string; out?: string }, store: Store): ExitCode {
  const identity = evidenceRepos(store).identities.get(opts.name);
  if (!identity)
    throw new InputError(`${opts.name} is not a registered identity in ${store.file}`, {
      field: '--name',
      value: opts.name,
      hint: 'list them with `run-backfill identity list`',
    });
  writeOutput(identity.publicKeyPem, opts.out);
  return EXIT.ok;
}

export function registerIdentity(
  opts: { name: string; role: string; publicKey: string; operator?: string },
  store: Store,
  out: Reporter,
): ExitCode {
  let pem: string;
  try {
    pem = readBoundedText(opts.publicKey, { what: 'public key', field: '--public-key', limit: LIMITS.publicKeyBytes });
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError(`cannot read the public key ${opts.publicKey}: ${(err as Error).message}`, {
      file: opts.publicKey,
      field: '--public-key',
    });
  }
  const { identity, created } = evidenceRepos(store).identities.register({
    name: checkIdentityName(opts.name),
    role: checkRole(opts.role),
    publicKeyPem: pem,
    actor: cliActor(opts.operator),
    source: opts.publicKey,
  });
  out.record(
    'identity',
    { ...identity, created },
    `${created ? 'Registered' : 'Already registered:'} ${identity.role} ${identity.name}, key ${identity.fingerprint}`,
  );
  return EXIT.ok;
}
