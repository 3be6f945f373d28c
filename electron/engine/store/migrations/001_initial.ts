import type { Migration } from './migration.ts';

/**
 * **Important**: once released, never edit this SQL — its sha256 is recorded in every
 * database it touched, and a database whose applied migration no longer matches is refused.
 * Change the schema by adding 002_*.ts.
 *
 * Timestamps are ISO-8601 UTC TEXT with milliseconds ('2026-11-30T12:00:00.000Z'), so they
 * compare correctly as strings (lease expiry relies on that).
 */
export const migration001: Migration = {
  version: 1,
  name: 'initial',
  sql: `
CREATE TABLE jobs (
  name            TEXT NOT NULL PRIMARY KEY,
  job_hash        TEXT NOT NULL,
  definition_json TEXT NOT NULL CHECK (json_valid(definition_json)),
  source_file     TEXT,
  updated_at      TEXT NOT NULL
) STRICT;

CREATE TABLE plans (
  plan_hash  TEXT NOT NULL PRIMARY KEY,
  request_id TEXT NOT NULL,
  job_name   TEXT NOT NULL,
  plan_json  TEXT NOT NULL CHECK (json_valid(plan_json)),
  created_at TEXT NOT NULL
) STRICT;

-- The run ledger: one row per run, counters derived from its partitions.
CREATE TABLE runs (
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
                       CHECK (status IN ('planned', 'running', 'paused', 'halted', 'failed', 'succeeded')),
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

CREATE INDEX runs_by_created ON runs (created_at);
CREATE INDEX runs_by_job ON runs (job_name, created_at);

CREATE TABLE partitions (
  run_id           TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  partition_key    TEXT NOT NULL,
  seq              INTEGER NOT NULL,
  start_at         TEXT,
  end_at           TEXT,
  status           TEXT NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'running', 'validated', 'published', 'failed', 'skipped')),
  rows_written     INTEGER,
  source_count     INTEGER,
  source_sums_json TEXT CHECK (source_sums_json IS NULL OR json_valid(source_sums_json)),
  target_count     INTEGER,
  target_sums_json TEXT CHECK (target_sums_json IS NULL OR json_valid(target_sums_json)),
  checksum         TEXT,
  attempt          INTEGER NOT NULL DEFAULT 0,
  error            TEXT,
  started_at       TEXT,
  finished_at      TEXT,
  duration_ms      INTEGER,
  PRIMARY KEY (run_id, partition_key)
) STRICT;

-- seq last, so "a run's partitions in one status, in order" needs no sort.
CREATE INDEX partitions_by_status ON partitions (run_id, status, seq);
CREATE UNIQUE INDEX partitions_by_seq ON partitions (run_id, seq);

CREATE TABLE evidence (
  id          INTEGER PRIMARY KEY,
  run_id      TEXT REFERENCES runs (run_id),
  plan_hash   TEXT,
  kind        TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  body_json   TEXT NOT NULL CHECK (json_valid(body_json)),
  body_sha256 TEXT NOT NULL
) STRICT;

CREATE INDEX evidence_by_run ON evidence (run_id, id);
CREATE INDEX evidence_by_plan ON evidence (plan_hash, kind, id);

-- Append-only. A later migration adds hash chaining (new columns); if it must backfill
-- them it drops and recreates these triggers inside its own transaction.
CREATE TABLE audit_log (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  at          TEXT NOT NULL,
  run_id      TEXT,
  entity      TEXT NOT NULL,
  entity_id   TEXT NOT NULL,
  event       TEXT NOT NULL,
  from_status TEXT,
  to_status   TEXT,
  actor       TEXT NOT NULL,
  detail_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail_json))
) STRICT;

CREATE INDEX audit_log_by_run ON audit_log (run_id, seq);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;
`,
};
