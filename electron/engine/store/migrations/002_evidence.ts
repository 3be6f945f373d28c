import type { Migration } from './migration.ts';

/**
 * Evidence you can trust: the hash-chained audit log, identities (public keys only), sign-offs,
 * signed checkpoints of the chain head, and runs imported from archives.
 *
 * **Important**: once released, never edit this SQL (see 001_initial).
 *
 * Audit rows written before this migration have no hash yet; the audit repository chains them
 * (in seq order, from the genesis hash) in the same transaction as the next append. That is
 * the only UPDATE the audit log allows: filling a missing hash, nothing else changed.
 * Everything here is append-only; triggers refuse UPDATE and DELETE. Triggers guard against
 * mistakes, not malice: `run-backfill verify` is what proves a file untouched.
 */
export const migration002: Migration = {
  version: 2,
  name: 'evidence',
  sql: `
ALTER TABLE audit_log ADD COLUMN prev_hash TEXT CHECK (prev_hash IS NULL OR (length(prev_hash) = 64 AND prev_hash NOT GLOB '*[^0-9a-f]*'));
ALTER TABLE audit_log ADD COLUMN hash TEXT CHECK (hash IS NULL OR (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'));

DROP TRIGGER audit_log_no_update;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
WHEN NOT (OLD.hash IS NULL AND NEW.hash IS NOT NULL AND NEW.prev_hash IS NOT NULL
  AND NEW.seq IS OLD.seq AND NEW.at IS OLD.at AND NEW.run_id IS OLD.run_id AND NEW.entity IS OLD.entity
  AND NEW.entity_id IS OLD.entity_id AND NEW.event IS OLD.event AND NEW.from_status IS OLD.from_status
  AND NEW.to_status IS OLD.to_status AND NEW.actor IS OLD.actor AND NEW.detail_json IS OLD.detail_json)
BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_chained BEFORE INSERT ON audit_log
WHEN NEW.hash IS NULL OR NEW.prev_hash IS NULL
BEGIN
  SELECT RAISE(ABORT, 'audit_log entries carry prev_hash and hash: append through the audit repository');
END;

CREATE TRIGGER evidence_no_update BEFORE UPDATE ON evidence
BEGIN
  SELECT RAISE(ABORT, 'evidence is append-only');
END;

CREATE TRIGGER evidence_no_delete BEFORE DELETE ON evidence
BEGIN
  SELECT RAISE(ABORT, 'evidence is append-only');
END;

-- Trusted signers of this workspace: public keys only. A name keeps its key and role for good.
CREATE TABLE identities (
  name           TEXT NOT NULL PRIMARY KEY,
  role           TEXT NOT NULL CHECK (role IN ('operator', 'lead')),
  public_key_pem TEXT NOT NULL,
  fingerprint    TEXT NOT NULL UNIQUE,
  registered_at  TEXT NOT NULL,
  registered_by  TEXT NOT NULL
) STRICT;

CREATE TRIGGER identities_no_update BEFORE UPDATE ON identities
BEGIN
  SELECT RAISE(ABORT, 'identities are append-only');
END;

CREATE TRIGGER identities_no_delete BEFORE DELETE ON identities
BEGIN
  SELECT RAISE(ABORT, 'identities are append-only');
END;

-- A lead's signature over {planHash, impactHash, jobHash, comment, signer, at}: statement_json
-- is the exact text signed (RFC 8785), the other columns repeat it for queries.
CREATE TABLE signoffs (
  id             INTEGER PRIMARY KEY,
  plan_hash      TEXT NOT NULL,
  request_id     TEXT NOT NULL,
  impact_hash    TEXT NOT NULL,
  job_hash       TEXT NOT NULL,
  signer         TEXT NOT NULL,
  signer_key     TEXT NOT NULL,
  signed_at      TEXT NOT NULL,
  comment        TEXT NOT NULL,
  statement_json TEXT NOT NULL CHECK (json_valid(statement_json)),
  signature      TEXT NOT NULL,
  public_key_pem TEXT NOT NULL,
  imported_at    TEXT NOT NULL,
  imported_by    TEXT NOT NULL,
  UNIQUE (statement_json, signature)
) STRICT;

CREATE INDEX signoffs_by_plan ON signoffs (plan_hash, id);
CREATE INDEX signoffs_by_request ON signoffs (request_id, id);

CREATE TRIGGER signoffs_no_update BEFORE UPDATE ON signoffs
BEGIN
  SELECT RAISE(ABORT, 'signoffs are append-only');
END;

CREATE TRIGGER signoffs_no_delete BEFORE DELETE ON signoffs
BEGIN
  SELECT RAISE(ABORT, 'signoffs are append-only');
END;

-- Signed heads of the audit chain: an entry removed from the end is caught by the next one.
CREATE TABLE audit_checkpoints (
  id         INTEGER PRIMARY KEY,
  seq        INTEGER NOT NULL,
  hash       TEXT NOT NULL,
  signer     TEXT NOT NULL,
  signer_key TEXT NOT NULL,
  at         TEXT NOT NULL,
  reason     TEXT NOT NULL,
  signature  TEXT NOT NULL
) STRICT;

CREATE INDEX audit_checkpoints_by_seq ON audit_checkpoints (seq);

CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints
BEGIN
  SELECT RAISE(ABORT, 'audit_checkpoints are append-only');
END;

CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints
BEGIN
  SELECT RAISE(ABORT, 'audit_checkpoints are append-only');
END;

-- Runs brought in by \`run-backfill import\` for offline review, with the verified archive.
CREATE TABLE imported_archives (
  run_id            TEXT NOT NULL PRIMARY KEY REFERENCES runs (run_id),
  manifest_sha256   TEXT NOT NULL,
  head_seq          INTEGER NOT NULL,
  head_hash         TEXT NOT NULL,
  archive_json      TEXT NOT NULL CHECK (json_valid(archive_json)),
  verification_json TEXT NOT NULL CHECK (json_valid(verification_json)),
  imported_at       TEXT NOT NULL,
  imported_by       TEXT NOT NULL
) STRICT;

CREATE TRIGGER imported_archives_no_update BEFORE UPDATE ON imported_archives
BEGIN
  SELECT RAISE(ABORT, 'imported_archives are append-only');
END;

CREATE TRIGGER imported_archives_no_delete BEFORE DELETE ON imported_archives
BEGIN
  SELECT RAISE(ABORT, 'imported_archives are append-only');
END;
`,
};
