/**
 * Whose keys a verifier trusts. **Important**: never the keys a bundle carries — anyone who can
 * edit a bundle can put their own key into `identities[]` and re-sign everything with it. Trust
 * comes from outside the bundle:
 *
 *   pinned     the public keys given with `--trust FILE` (and only those);
 *   workspace  the identities registered in the verifier's own ledger (`identity register`).
 *
 * A third source, `exporter`, is for the incident note's description of itself while it is
 * being written (the exporting workspace's registry, copied into the bundle a moment before);
 * `verify` and `import` never use it.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { BundleIdentity } from './bundle.ts';
import type { Identity } from './identities.ts';
import { fingerprint, parsePublicKey, publicKeyPem, shortFingerprint, type Role } from './keys.ts';

export type TrustSource = 'pinned' | 'workspace' | 'exporter';

export interface TrustedKey {
  /** The registered name; null for a pinned key (a PEM file names nobody). */
  name: string | null;
  role: Role | null;
  fingerprint: string;
  publicKeyPem: string;
  /** The file it was pinned from, or the ledger it is registered in. */
  from: string;
}

export interface Trust {
  source: TrustSource;
  /** The --trust files, or the ledger file: printed with every verdict. */
  where: string;
  keys: readonly TrustedKey[];
}

/** A key that signs for a name, as a verifier may rely on it. */
export interface ResolvedKey {
  name: string;
  role: Role | null;
  fingerprint: string;
  publicKeyPem: string;
}

export function pinnedTrust(files: readonly { file: string; pem: string }[]): Trust {
  const keys = files.map(({ file, pem }) => {
    const key = parsePublicKey(pem, file);
    return { name: null, role: null, fingerprint: fingerprint(key), publicKeyPem: publicKeyPem(key), from: file };
  });
  return { source: 'pinned', where: files.map((f) => f.file).join(', '), keys };
}

type Registered = Pick<Identity, 'name' | 'role' | 'publicKeyPem' | 'fingerprint'>;

export function registryTrust(
  identities: readonly { name: string; role: string; publicKeyPem: string; fingerprint: string }[],
  where: string,
  source: 'workspace' | 'exporter' = 'workspace',
): Trust {
  return {
    source,
    where,
    keys: identities.map((i) => ({
      name: i.name,
      role: i.role as Role,
      publicKeyPem: i.publicKeyPem,
      fingerprint: i.fingerprint,
      from: where,
    })),
  };
}

/** The identities registered in a ledger file, read without opening it as a store (no migration, no lock). */
export function readRegistryTrust(file: string): Trust {
  if (!existsSync(file)) return { source: 'workspace', where: `${file} (no such ledger)`, keys: [] };
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const table = db.prepare<[], number>("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'identities'").pluck().get();
    if (!table) return { source: 'workspace', where: file, keys: [] };
    const rows = db
      .prepare<[], { name: string; role: Role; public_key_pem: string; fingerprint: string }>('SELECT * FROM identities ORDER BY name')
      .all();
    return registryTrust(
      rows.map((r) => ({ name: r.name, role: r.role, publicKeyPem: r.public_key_pem, fingerprint: r.fingerprint })),
      file,
    );
  } finally {
    db.close();
  }
}

/** One line for the report: where trust comes from, and which keys that is. */
export function describeTrust(trust: Trust): string {
  const keys = trust.keys.map((k) => (k.name ? `${k.name} (${k.role ?? '?'})` : `${k.from} (key ${shortFingerprint(k.fingerprint)})`));
  const list = keys.length > 0 ? keys.join(', ') : 'none';
  switch (trust.source) {
    case 'pinned':
      return `keys pinned with --trust: ${list}`;
    case 'workspace':
      return `identities registered in ${trust.where}: ${list}`;
    case 'exporter':
      return `identities registered where the note was exported: ${list}`;
  }
}

const carriedFingerprint = (pem: string): string | undefined => {
  try {
    return fingerprint(pem);
  } catch {
    return undefined;
  }
};

/**
 * The trusted key that signs for `signer` with the key the signature names, or why there is
 * none. With pinned keys the name and role come from the bundle's identities[] for that very
 * key: they are covered by the head's signature, which must itself be by a pinned key.
 */
export function resolveSigner(
  trust: Trust,
  identities: readonly BundleIdentity[],
  signer: string,
  statedKey: string,
): { key: ResolvedKey } | { problem: string } {
  if (trust.source === 'pinned') {
    const pinned = trust.keys.find((k) => k.fingerprint === statedKey);
    if (!pinned) return { problem: `${signer}'s key ${shortFingerprint(statedKey)} is not among the keys pinned with --trust` };
    const claimed = identities.find((i) => i.name === signer && carriedFingerprint(i.publicKeyPem) === statedKey);
    return {
      key: {
        name: signer,
        role: (claimed?.role as Role | undefined) ?? null,
        fingerprint: pinned.fingerprint,
        publicKeyPem: pinned.publicKeyPem,
      },
    };
  }
  const registered = trust.keys.find((k) => k.name === signer);
  if (!registered) return { problem: `${signer} is not a registered identity in ${trust.where}` };
  if (registered.fingerprint !== statedKey)
    return {
      problem: `key ${shortFingerprint(statedKey)} is not ${signer}'s key ${shortFingerprint(registered.fingerprint)} registered in ${trust.where}`,
    };
  return { key: { name: signer, role: registered.role, fingerprint: registered.fingerprint, publicKeyPem: registered.publicKeyPem } };
}

/** Identities as the sign-off rules look them up (signoffRules.ts), from trusted keys only. */
export function trustedIdentity(trust: Trust, identities: readonly BundleIdentity[]): (name: string) => Registered | undefined {
  return (name) => {
    if (trust.source !== 'pinned') {
      const k = trust.keys.find((x) => x.name === name);
      return k && k.role ? { name, role: k.role, fingerprint: k.fingerprint, publicKeyPem: k.publicKeyPem } : undefined;
    }
    const claimed = identities.find((i) => i.name === name);
    const fp = claimed ? carriedFingerprint(claimed.publicKeyPem) : undefined;
    const pinned = trust.keys.find((k) => k.fingerprint === fp);
    return claimed && pinned
      ? { name, role: claimed.role as Role, fingerprint: pinned.fingerprint, publicKeyPem: pinned.publicKeyPem }
      : undefined;
  };
}

/** The bundle's identities that the verifier's own registry knows under another key: re-keyed. */
export function rekeyedIdentities(trust: Trust, identities: readonly BundleIdentity[]): string[] {
  if (trust.source !== 'workspace') return [];
  return identities.flatMap((i) => {
    const registered = trust.keys.find((k) => k.name === i.name);
    const carried = carriedFingerprint(i.publicKeyPem);
    if (!registered || carried === undefined || registered.fingerprint === carried) return [];
    return [
      `identity ${i.name} in the bundle carries key ${shortFingerprint(carried)}, but ${trust.where} registers ${i.name} with key ${shortFingerprint(registered.fingerprint)}: the bundle's identities were re-keyed`,
    ];
  });
}

/** A key the bundle carries for this fingerprint (identities[] or a sign-off's own PEM): for diagnosis only, never trust. */
export function carriedKey(identities: readonly BundleIdentity[], extra: readonly string[], fp: string): string | undefined {
  return [...identities.map((i) => i.publicKeyPem), ...extra].find((pem) => carriedFingerprint(pem) === fp);
}
