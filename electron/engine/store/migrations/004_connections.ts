import type { Migration } from './migration.ts';

/**
 * Connections added in the app (docs/design.md §4: "in the app, stored in SQLite"). The non-secret
 * settings are JSON in the shape of backfill.config.yaml's entries; the password is only ever
 * ciphertext, encrypted by Electron's safeStorage in the main process (or the harness's own
 * key), with the backend that made it so a plain-text-backed secret can be told apart.
 *
 * **Important**: once released, never edit this SQL (see 001_initial).
 */
export const migration004: Migration = {
  version: 4,
  name: 'connections',
  sql: `
CREATE TABLE connections (
  name              TEXT NOT NULL PRIMARY KEY,
  kind              TEXT NOT NULL CHECK (kind IN ('postgres', 's3')),
  settings_json     TEXT NOT NULL CHECK (json_valid(settings_json)),
  secret_ciphertext BLOB,
  secret_backend    TEXT CHECK (secret_backend IN ('os', 'plain-text')),
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  CHECK ((secret_ciphertext IS NULL) = (secret_backend IS NULL))
) STRICT;
`,
};
