/**
 * Connections saved in the app (migration 004). The repository never sees a password: it
 * stores and returns ciphertext made by the caller's SecretBox (Electron's safeStorage in the
 * app), so nothing here can leak one into SQLite in plain text.
 */
import type Database from 'better-sqlite3';
import { canonicalJson } from '../json.ts';
import type { Clock } from '../types.ts';
import type { AuditRepo } from './audit.ts';

export interface SavedConnection {
  name: string;
  kind: 'postgres' | 's3';
  /** the config entry without secrets, as in backfill.config.yaml */
  settings: Record<string, unknown>;
  secret: { ciphertext: Buffer; backend: 'os' | 'plain-text' } | null;
  createdAt: string;
  updatedAt: string;
}

export interface ConnectionInput {
  name: string;
  kind: 'postgres' | 's3';
  settings: Record<string, unknown>;
  /** undefined keeps the stored secret; null removes it */
  secret?: { ciphertext: Buffer; backend: 'os' | 'plain-text' } | null;
  actor: string;
}

export interface ConnectionsRepo {
  list(): SavedConnection[];
  get(name: string): SavedConnection | undefined;
  save(input: ConnectionInput): SavedConnection;
  remove(name: string, actor: string): boolean;
}

interface Row {
  name: string;
  kind: string;
  settings_json: string;
  secret_ciphertext: Buffer | null;
  secret_backend: string | null;
  created_at: string;
  updated_at: string;
}

const toSaved = (row: Row): SavedConnection => ({
  name: row.name,
  kind: row.kind as SavedConnection['kind'],
  settings: JSON.parse(row.settings_json) as Record<string, unknown>,
  secret: row.secret_ciphertext === null ? null : { ciphertext: row.secret_ciphertext, backend: row.secret_backend as 'os' | 'plain-text' },
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export function createConnectionsRepo(db: Database.Database, clock: Clock, audit: AuditRepo): ConnectionsRepo {
  const statements = {
    list: db.prepare<[], Row>('SELECT * FROM connections ORDER BY name'),
    get: db.prepare<[string], Row>('SELECT * FROM connections WHERE name = ?'),
    upsert: db.prepare<Record<string, unknown>>(`
      INSERT INTO connections (name, kind, settings_json, secret_ciphertext, secret_backend, created_at, updated_at)
      VALUES (@name, @kind, @settingsJson, @ciphertext, @backend, @now, @now)
      ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, settings_json = excluded.settings_json,
        secret_ciphertext = excluded.secret_ciphertext, secret_backend = excluded.secret_backend, updated_at = excluded.updated_at`),
    remove: db.prepare<[string]>('DELETE FROM connections WHERE name = ?'),
  };

  const save = db.transaction((input: ConnectionInput): SavedConnection => {
    const before = statements.get.get(input.name);
    const secret =
      input.secret === undefined
        ? before && before.secret_ciphertext
          ? { ciphertext: before.secret_ciphertext, backend: before.secret_backend }
          : null
        : input.secret;
    statements.upsert.run({
      name: input.name,
      kind: input.kind,
      settingsJson: canonicalJson(input.settings, `connection ${input.name}`),
      ciphertext: secret?.ciphertext ?? null,
      backend: secret?.backend ?? null,
      now: clock().toISOString(),
    });
    // The audit says THAT a secret is kept and how, never anything derived from it.
    audit.append({
      entity: 'connection',
      entityId: input.name,
      event: before ? 'connection.updated' : 'connection.created',
      actor: input.actor,
      detail: { kind: input.kind, settings: input.settings, secret: secret ? secret.backend : 'none' },
    });
    const row = statements.get.get(input.name);
    if (!row) throw new Error(`connection ${input.name} vanished while saving`);
    return toSaved(row);
  });

  const remove = db.transaction((name: string, actor: string): boolean => {
    const { changes } = statements.remove.run(name);
    if (changes > 0) audit.append({ entity: 'connection', entityId: name, event: 'connection.removed', actor, detail: {} });
    return changes > 0;
  });

  return {
    list: () => statements.list.all().map(toSaved),
    get: (name) => {
      const row = statements.get.get(name);
      return row ? toSaved(row) : undefined;
    },
    save: (input) => save.immediate(input),
    remove: (name, actor) => remove.immediate(name, actor),
  };
}
