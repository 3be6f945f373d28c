import type { Migration } from './migration.ts';

/**
 * Two run statuses: `canary` (the first partitions ran, were reconciled and compared, and the
 * run waits for the operator to continue or abandon it) and `abandoned` (the operator stopped
 * it for good after its canary). SQLite cannot change a CHECK constraint in place, so `runs` is
 * rebuilt the documented way (sqlite.org/lang_altertable.html, "other kinds of table schema
 * changes"): with foreign keys off for the migration (`foreignKeysOff`), copied, swapped, its
 * indexes recreated, and `PRAGMA foreign_key_check` run before the commit.
 *
 * **Important**: once released, never edit this SQL (see 001_initial).
 */
export const migration006: Migration = {
  version: 6,
  name: 'canary_status',
  foreignKeysOff: true,
  sql: `
CREATE TABLE runs_new (
  run_id               TEXT NOT NULL PRIMARY KEY,
  job_name             TEXT NOT NULL,
  plan_hash            TEXT NOT NULL REFERENCES plans (plan_hash),
  job_hash             TEXT NOT NULL,
  kind                 TEXT NOT NULL CHECK (kind IN ('execute', 'dry-run')),
  range_from           TEXT,
  range_to             TEXT,
  unit                 TEXT,
  timezone             TEXT,
  write_mode           TEXT,
  tier                 TEXT,
  status               TEXT NOT NULL
                       CHECK (status IN ('planned', 'running', 'paused', 'halted', 'canary', 'abandoned', 'failed', 'succeeded')),
  cursor               TEXT,
  partitions_total     INTEGER NOT NULL DEFAULT 0,
  partitions_published INTEGER NOT NULL DEFAULT 0,
  partitions_failed    INTEGER NOT NULL DEFAULT 0,
  rows_written         INTEGER NOT NULL DEFAULT 0,
  requested_by         TEXT,
  executed_by          TEXT,
  settings_json        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings_json)),
  halt_reason          TEXT,
  lease_owner          TEXT,
  lease_expires_at     TEXT,
  created_at           TEXT NOT NULL,
  started_at           TEXT,
  finished_at          TEXT,
  updated_at           TEXT NOT NULL
) STRICT;

INSERT INTO runs_new SELECT * FROM runs;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;

CREATE INDEX runs_by_created ON runs (created_at);
CREATE INDEX runs_by_job ON runs (job_name, created_at);
`,
};
