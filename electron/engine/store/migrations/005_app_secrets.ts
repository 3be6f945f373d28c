import type { Migration } from './migration.ts';

/**
 * Named secrets saved in the app for what the workspace's files name by an environment
 * variable — a probe's token (`bearer_token_env`), a webhook's URL (`url_env`): the app puts
 * each into the engine's own environment under its name. Only ciphertext is stored, made by
 * the host's SecretBox (Electron's safeStorage), with the backend that made it.
 *
 * **Important**: once released, never edit this SQL (see 001_initial).
 */
export const migration005: Migration = {
  version: 5,
  name: 'app_secrets',
  sql: `
CREATE TABLE app_secrets (
  name       TEXT NOT NULL PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 128),
  ciphertext BLOB NOT NULL,
  backend    TEXT NOT NULL CHECK (backend IN ('os', 'plain-text')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
`,
};
