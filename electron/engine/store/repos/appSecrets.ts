/**
 * Secrets saved in the app by name (migration 005). Like connections, the repository only ever
 * holds ciphertext made by the caller's SecretBox; the audit says that a secret was saved or
 * removed, never anything derived from its value.
 */
import type Database from 'better-sqlite3';
import type { Clock } from '../types.ts';
import type { AuditRepo } from './audit.ts';

export interface SavedSecret {
  name: string;
  ciphertext: Buffer;
  backend: 'os' | 'plain-text';
  createdAt: string;
  updatedAt: string;
}

export interface AppSecretsRepo {
  list(): SavedSecret[];
  save(input: { name: string; ciphertext: Buffer; backend: 'os' | 'plain-text'; actor: string }): void;
  remove(name: string, actor: string): boolean;
}

interface Row {
  name: string;
  ciphertext: Buffer;
  backend: string;
  created_at: string;
  updated_at: string;
}

export function createAppSecretsRepo(db: Database.Database, clock: Clock, audit: AuditRepo): AppSecretsRepo {
  const statements = {
    list: db.prepare<[], Row>('SELECT * FROM app_secrets ORDER BY name'),
    exists: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM app_secrets WHERE name = ?'),
    upsert: db.prepare<{ name: string; ciphertext: Buffer; backend: string; now: string }>(`
      INSERT INTO app_secrets (name, ciphertext, backend, created_at, updated_at) VALUES (@name, @ciphertext, @backend, @now, @now)
      ON CONFLICT (name) DO UPDATE SET ciphertext = excluded.ciphertext, backend = excluded.backend, updated_at = excluded.updated_at`),
    remove: db.prepare<[string]>('DELETE FROM app_secrets WHERE name = ?'),
  };
  const save = db.transaction((input: { name: string; ciphertext: Buffer; backend: 'os' | 'plain-text'; actor: string }) => {
    const existed = (statements.exists.get(input.name)?.n ?? 0) > 0;
    statements.upsert.run({ name: input.name, ciphertext: input.ciphertext, backend: input.backend, now: clock().toISOString() });
    audit.append({
      entity: 'secret',
      entityId: input.name,
      event: existed ? 'secret.updated' : 'secret.created',
      actor: input.actor,
      detail: { storage: input.backend },
    });
  });
  const remove = db.transaction((name: string, actor: string): boolean => {
    const { changes } = statements.remove.run(name);
    if (changes > 0) audit.append({ entity: 'secret', entityId: name, event: 'secret.removed', actor, detail: {} });
    return changes > 0;
  });
  return {
    list: () =>
      statements.list.all().map((r) => ({
        name: r.name,
        ciphertext: r.ciphertext,
        backend: r.backend as 'os' | 'plain-text',
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      })),
    save: (input) => save.immediate(input),
    remove: (name, actor) => remove.immediate(name, actor),
  };
}
