/**
 * Trusted signers of a workspace: name, role and PUBLIC key. Registering is audited and final —
 * a name never changes key or role, so a signature checked today checks the same way later.
 */
import type Database from 'better-sqlite3';
import { InputError } from '../../../shared/errors.ts';
import type { AuditRepo } from '../store/repos/audit.ts';
import type { Clock } from '../store/types.ts';
import { checkIdentityName, fingerprint, parsePublicKey, publicKeyPem, shortFingerprint, type Role } from './keys.ts';

export interface Identity {
  name: string;
  role: Role;
  publicKeyPem: string;
  fingerprint: string;
  registeredAt: string;
  registeredBy: string;
}

export interface IdentityInput {
  name: string;
  role: Role;
  publicKeyPem: string;
  /** Who registered it; audited. */
  actor: string;
  /** Where the key came from, for messages (a file name). */
  source?: string;
}

export interface IdentitiesRepo {
  /** Registers a public key; the same name, key and role again is a no-op (created: false). */
  register(input: IdentityInput): { identity: Identity; created: boolean };
  get(name: string): Identity | undefined;
  byFingerprint(fp: string): Identity | undefined;
  list(): Identity[];
}

interface IdentityRow {
  name: string;
  role: string;
  public_key_pem: string;
  fingerprint: string;
  registered_at: string;
  registered_by: string;
}

const toIdentity = (row: IdentityRow): Identity => ({
  name: row.name,
  role: row.role as Role,
  publicKeyPem: row.public_key_pem,
  fingerprint: row.fingerprint,
  registeredAt: row.registered_at,
  registeredBy: row.registered_by,
});

export function createIdentitiesRepo(db: Database.Database, clock: Clock, audit: AuditRepo): IdentitiesRepo {
  const statements = {
    get: db.prepare<[string], IdentityRow>('SELECT * FROM identities WHERE name = ?'),
    byFingerprint: db.prepare<[string], IdentityRow>('SELECT * FROM identities WHERE fingerprint = ?'),
    list: db.prepare<[], IdentityRow>('SELECT * FROM identities ORDER BY name'),
    insert: db.prepare<Record<string, unknown>, IdentityRow>(`
      INSERT INTO identities (name, role, public_key_pem, fingerprint, registered_at, registered_by)
      VALUES (@name, @role, @pem, @fingerprint, @now, @actor) RETURNING *`),
  };

  const register = db.transaction((input: IdentityInput) => {
    checkIdentityName(input.name);
    const source = input.source ?? 'the public key';
    // Normalised PEM: the same key always stores as the same text.
    const pem = publicKeyPem(parsePublicKey(input.publicKeyPem, source));
    const fp = fingerprint(pem);
    const existing = statements.get.get(input.name);
    if (existing !== undefined) {
      if (existing.fingerprint === fp && existing.role === input.role) return { identity: toIdentity(existing), created: false };
      const what = existing.fingerprint !== fp ? `key ${shortFingerprint(existing.fingerprint)}` : `role ${existing.role}`;
      throw new InputError(`${input.name} is already registered with ${what}; a registered identity never changes key or role`, {
        field: '--name',
        value: input.name,
        hint: 'register the new key under a new name (e.g. alice-2026)',
      });
    }
    const holder = statements.byFingerprint.get(fp);
    if (holder !== undefined) {
      throw new InputError(`this key (${shortFingerprint(fp)}) is already registered as ${holder.name}: one key, one person`, {
        file: input.source,
        field: '--public-key',
      });
    }
    const row = statements.insert.get({
      name: input.name,
      role: input.role,
      pem,
      fingerprint: fp,
      now: clock().toISOString(),
      actor: input.actor,
    });
    if (row === undefined) throw new Error('INSERT … RETURNING gave no identity row');
    audit.append({
      entity: 'identity',
      entityId: input.name,
      event: 'identity.registered',
      actor: input.actor,
      detail: { role: input.role, fingerprint: fp },
    });
    return { identity: toIdentity(row), created: true };
  });

  const one = (row: IdentityRow | undefined) => (row === undefined ? undefined : toIdentity(row));
  return {
    register: (input) => register.immediate(input),
    get: (name) => one(statements.get.get(name)),
    byFingerprint: (fp) => one(statements.byFingerprint.get(fp)),
    list: () => statements.list.all().map(toIdentity),
  };
}
