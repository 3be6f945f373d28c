import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
  migrateDatabase,
  openStore,
  sha256Hex,
  StoreError,
  type Migration,
} from '../../electron/engine/store/index.ts';
import { assertMigrationRegistry, migrationLabel } from '../../electron/engine/store/migrations/index.ts';

const clock = () => new Date('2026-11-30T12:00:00.000Z');
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'store-migrations-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function storeErrorOf(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error('expected a StoreError, nothing was thrown');
}

describe('the migration registry', () => {
  it('only goes up', () => {
    // 1, 2, 3, …: no gaps, so each helper's reserved number lands in its place.
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(LATEST_SCHEMA_VERSION).toBe(MIGRATIONS.length);
    expect(() => assertMigrationRegistry(MIGRATIONS)).not.toThrow();
  });

  it.each<[string, Migration[], string]>([
    [
      'a repeated version',
      [
        { version: 1, name: 'a', sql: 'SELECT 1' },
        { version: 1, name: 'b', sql: 'SELECT 1' },
      ],
      'migration registry must be strictly increasing: version 1 (b) follows 1',
    ],
    [
      'a version going down',
      [
        { version: 2, name: 'a', sql: 'SELECT 1' },
        { version: 1, name: 'b', sql: 'SELECT 1' },
      ],
      'migration registry must be strictly increasing: version 1 (b) follows 2',
    ],
    ['version 0', [{ version: 0, name: 'a', sql: 'SELECT 1' }], 'migration registry must be strictly increasing: version 0 (a) follows 0'],
    [
      'a fractional version',
      [{ version: 1.5, name: 'a', sql: 'SELECT 1' }],
      'migration registry must be strictly increasing: version 1.5 (a) follows 0',
    ],
    [
      'a repeated name',
      [
        { version: 1, name: 'a', sql: 'SELECT 1' },
        { version: 2, name: 'a', sql: 'SELECT 1' },
      ],
      'migration 2 needs a unique, non-empty name (got "a")',
    ],
    ['an empty name', [{ version: 1, name: ' ', sql: 'SELECT 1' }], 'migration 1 needs a unique, non-empty name (got " ")'],
    ['no SQL', [{ version: 1, name: 'a', sql: '\n' }], 'migration 1 (a) has no SQL'],
  ])('refuses %s', (_case, registry, message) => {
    expect(() => assertMigrationRegistry(registry)).toThrow(new Error(message));
  });
});

describe('migrating', () => {
  it('brings a fresh in-memory database to the latest version in one step, recording each hash', () => {
    const db = new Database(':memory:');
    expect(migrateDatabase(db, { file: ':memory:', clock })).toEqual({
      from: 0,
      to: LATEST_SCHEMA_VERSION,
      applied: MIGRATIONS.map(migrationLabel),
    });
    expect(db.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    expect(db.prepare('SELECT * FROM schema_migrations').all()).toEqual(
      MIGRATIONS.map((m) => ({ version: m.version, name: m.name, sha256: sha256Hex(m.sql), applied_at: '2026-11-30T12:00:00.000Z' })),
    );
    db.close();
  });

  it('001 creates the ledger tables, all STRICT', () => {
    const db = new Database(':memory:');
    migrateDatabase(db, { file: ':memory:', clock, migrations: [MIGRATIONS[0] as Migration] });
    const tables = db
      .prepare<[], { name: string; strict: number }>(
        "SELECT name, strict FROM pragma_table_list WHERE schema = 'main' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all();
    expect(tables).toEqual(
      ['audit_log', 'evidence', 'jobs', 'partitions', 'plans', 'runs', 'schema_migrations'].map((name) => ({ name, strict: 1 })),
    );
    db.close();
  });

  it('001 creates the run ledger columns, indexes and audit triggers', () => {
    const db = new Database(':memory:');
    migrateDatabase(db, { file: ':memory:', clock, migrations: [MIGRATIONS[0] as Migration] });
    const columns = (table: string) =>
      db
        .prepare<[string], { name: string }>('SELECT name FROM pragma_table_info(?)')
        .all(table)
        .map((c) => c.name);
    expect(columns('runs')).toEqual([
      'run_id',
      'job_name',
      'plan_hash',
      'job_hash',
      'kind',
      'range_from',
      'range_to',
      'unit',
      'timezone',
      'write_mode',
      'tier',
      'status',
      'cursor',
      'partitions_total',
      'partitions_published',
      'partitions_failed',
      'rows_written',
      'requested_by',
      'executed_by',
      'settings_json',
      'halt_reason',
      'lease_owner',
      'lease_expires_at',
      'created_at',
      'started_at',
      'finished_at',
      'updated_at',
    ]);
    expect(columns('partitions')).toEqual([
      'run_id',
      'partition_key',
      'seq',
      'start_at',
      'end_at',
      'status',
      'rows_written',
      'source_count',
      'source_sums_json',
      'target_count',
      'target_sums_json',
      'checksum',
      'attempt',
      'error',
      'started_at',
      'finished_at',
      'duration_ms',
    ]);
    const objects = db
      .prepare<[], { type: string; name: string }>(
        "SELECT type, name FROM sqlite_schema WHERE type IN ('index', 'trigger') AND name NOT LIKE 'sqlite_%' ORDER BY type, name",
      )
      .all();
    expect(objects).toEqual([
      { type: 'index', name: 'audit_log_by_run' },
      { type: 'index', name: 'evidence_by_plan' },
      { type: 'index', name: 'evidence_by_run' },
      { type: 'index', name: 'partitions_by_seq' },
      { type: 'index', name: 'partitions_by_status' },
      { type: 'index', name: 'runs_by_created' },
      { type: 'index', name: 'runs_by_job' },
      { type: 'trigger', name: 'audit_log_no_delete' },
      { type: 'trigger', name: 'audit_log_no_update' },
    ]);
    db.close();
  });

  it('applies only what is pending when the registry grows', () => {
    const db = new Database(':memory:');
    const first = MIGRATIONS[0] as Migration;
    migrateDatabase(db, { file: 'grow.db', migrations: [first], clock });
    const second: Migration = { version: 2, name: 'add_note', sql: 'ALTER TABLE runs ADD COLUMN note TEXT;' };
    expect(migrateDatabase(db, { file: 'grow.db', migrations: [first, second], clock })).toEqual({
      from: 1,
      to: 2,
      applied: ['002_add_note'],
    });
    expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all()).toEqual([1, 2]);
    db.close();
  });

  it('rolls every pending migration back when one fails, and says which', () => {
    const db = new Database(':memory:');
    const broken: Migration = { version: 2, name: 'broken', sql: 'CREATE TABLE later (x INTEGER) STRICT; SELECT * FROM missing_table;' };
    const err = storeErrorOf(() => migrateDatabase(db, { file: 'broken.db', migrations: [...MIGRATIONS, broken], clock }));
    expect(err.code).toBe('migration');
    expect(err.message).toBe(
      'could not apply migration 002_broken to broken.db: no such table: missing_table. Nothing was changed; the database stays at schema version 0.',
    );
    expect(db.pragma('user_version', { simple: true })).toBe(0);
    expect(db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").pluck().get()).toBe(0);
    db.close();
  });
});

describe('openStore', () => {
  it('creates parent folders, uses WAL and the safety pragmas on a file', () => {
    const file = join(dir, 'nested', 'deeper', 'runbook.db');
    const store = openStore(file, { clock });
    expect(store.schemaVersion).toBe(LATEST_SCHEMA_VERSION);
    const pragma = (name: string) => store.db.pragma(name, { simple: true });
    expect([pragma('journal_mode'), pragma('foreign_keys'), pragma('busy_timeout'), pragma('synchronous'), pragma('user_version')]).toEqual(
      ['wal', 1, 5000, 1, LATEST_SCHEMA_VERSION],
    );
    store.close();
  });

  it('keeps the default journal for :memory: and still enforces foreign keys', () => {
    const store = openStore(':memory:', { clock });
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('memory');
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    store.close();
  });

  it('re-opening is idempotent: nothing re-applied, data kept', () => {
    const file = join(dir, 'runbook.db');
    const first = openStore(file, { clock });
    first.jobs.upsert({ name: 'daily_revenue', jobHash: 'h1', definition: { sql: 'SELECT 1' } });
    first.close();
    const later = () => new Date('2027-01-01T00:00:00.000Z');
    const second = openStore(file, { clock: later });
    expect(second.db.prepare('SELECT version, applied_at FROM schema_migrations').all()).toEqual(
      MIGRATIONS.map((m) => ({ version: m.version, applied_at: '2026-11-30T12:00:00.000Z' })),
    );
    expect(second.jobs.get('daily_revenue')?.jobHash).toBe('h1');
    second.close();
  });

  it('refuses a database from the future, naming the file and both versions', () => {
    const file = join(dir, 'future.db');
    openStore(file, { clock }).close();
    const raw = new Database(file);
    raw.pragma('user_version = 7');
    raw.close();
    const err = storeErrorOf(() => openStore(file, { clock }));
    expect(err.code).toBe('future');
    expect(err.file).toBe(file);
    expect(err.message).toBe(
      `${file} has schema version 7, but this build of Backfill Runbook knows only up to version ${LATEST_SCHEMA_VERSION}. ` +
        'Open it with a newer Backfill Runbook build; this one will not change it.',
    );
    // Refusing must not touch it.
    const check = new Database(file);
    expect(check.pragma('user_version', { simple: true })).toBe(7);
    check.close();
  });

  it('refuses a future database before switching its journal mode', () => {
    const file = join(dir, 'future-rollback.db');
    const raw = new Database(file);
    raw.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 1}`);
    raw.close();
    expect(storeErrorOf(() => openStore(file, { clock })).code).toBe('future');
    const check = new Database(file);
    expect(check.pragma('journal_mode', { simple: true })).toBe('delete');
    check.close();
  });

  it('refuses a database whose applied migration was edited since', () => {
    const file = join(dir, 'edited.db');
    openStore(file, { clock }).close();
    const first = MIGRATIONS[0] as Migration;
    const edited: Migration = { ...first, sql: `${first.sql}\n-- a "harmless" edit\n` };
    const err = storeErrorOf(() => openStore(file, { clock, migrations: [edited, ...MIGRATIONS.slice(1)] }));
    expect(err.code).toBe('tampered');
    expect(err.message).toBe(
      `${file} does not match this build of Backfill Runbook: migration 001_initial was applied with sha256 ${sha256Hex(first.sql)}, ` +
        `but the code now has sha256 ${sha256Hex(edited.sql)}. ` +
        'A released migration must never be edited or removed; restore it and add a new migration instead. The database was not changed.',
    );
  });

  it.each<[string, string, string]>([
    [
      'a hand-edited hash',
      "UPDATE schema_migrations SET sha256 = 'abc'",
      'migration 001_initial was applied with sha256 abc, but the code now has sha256 ',
    ],
    [
      'a missing record',
      'DELETE FROM schema_migrations',
      `migration 001_initial is not recorded as applied though the schema version is ${LATEST_SCHEMA_VERSION}`,
    ],
    [
      'a record the code lacks',
      "INSERT INTO schema_migrations VALUES (99, 'ghost', 'x', 'y')",
      `schema_migrations records migration 99 (ghost), which this build does not have at schema version ${LATEST_SCHEMA_VERSION}`,
    ],
  ])('refuses %s in schema_migrations', (_case, sql, messagePart) => {
    const file = join(dir, 'hand.db');
    openStore(file, { clock }).close();
    const raw = new Database(file);
    raw.exec(sql);
    raw.close();
    const err = storeErrorOf(() => openStore(file, { clock }));
    expect(err.code).toBe('tampered');
    expect(err.message).toContain(`${file} does not match this build of Backfill Runbook: ${messagePart}`);
  });

  it('refuses a file that is not SQLite, naming it, and leaves it alone', () => {
    const file = join(dir, 'notes.txt');
    const text = 'these are my notes, not a database\n'.repeat(20);
    writeFileSync(file, text);
    const err = storeErrorOf(() => openStore(file, { clock }));
    expect(err.code).toBe('not-a-database');
    expect(err.message).toBe(
      `${file} is not a Backfill Runbook database (SQLITE_NOTADB: file is not a database). ` +
        'Choose another file, or move this one aside so a new database can be created.',
    );
  });

  it('refuses a folder where the database file should be', () => {
    const err = storeErrorOf(() => openStore(dir, { clock }));
    expect(err.code).toBe('io');
    expect(err.message).toBe(
      `cannot open ${dir} (SQLITE_CANTOPEN: unable to open database file). Check that it is a file (not a folder) you may read and write.`,
    );
  });
});
