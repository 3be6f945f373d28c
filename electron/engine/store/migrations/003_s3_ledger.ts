import type { Migration } from './migration.ts';

/**
 * The S3 side of the ledger (targets/s3/ledger.ts). S3 has no transactions, so every side
 * effect of an S3 partition write is recorded here BEFORE it happens — an object about to be
 * written, a multipart upload as soon as its id is known — and forgotten once the partition's
 * manifest settles it. A crash therefore never leaves an object or an upload nobody knows of:
 * the next run aborts the uploads and deletes the objects no manifest lists.
 *
 * **Important**: once released, never edit this SQL (see 001_initial).
 *
 * Not tied to `runs` by a foreign key: a crashed run may be deleted from the ledger while its
 * leftovers still wait to be cleaned up.
 */
export const migration003: Migration = {
  version: 3,
  name: 's3_ledger',
  sql: `
CREATE TABLE s3_effects (
  id            INTEGER PRIMARY KEY,
  run_id        TEXT NOT NULL,
  partition_key TEXT NOT NULL,
  bucket        TEXT NOT NULL,
  -- the partition's key stem: its manifest is stem || '_complete'
  stem          TEXT NOT NULL,
  kind          TEXT NOT NULL CHECK (kind IN ('object', 'upload')),
  object_key    TEXT NOT NULL,
  upload_id     TEXT,
  created_at    TEXT NOT NULL,
  CHECK (kind = 'object' OR upload_id IS NOT NULL)
) STRICT;

CREATE INDEX s3_effects_by_stem ON s3_effects (bucket, stem, id);

-- One writer per S3 partition on this machine (S3 has no advisory locks).
CREATE TABLE s3_partition_locks (
  bucket     TEXT NOT NULL,
  stem       TEXT NOT NULL,
  run_id     TEXT NOT NULL,
  owner      TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (bucket, stem)
) STRICT;
`,
};
