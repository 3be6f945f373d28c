import type Database from 'better-sqlite3';
import { StoreError, translateSqliteError } from './errors.ts';
import { sha256Hex } from './json.ts';
import { MIGRATIONS, migrationLabel, type Migration } from './migrations/index.ts';
import type { Clock } from './types.ts';

export interface MigrateOptions {
  /** Named in every message, so the user knows which database was refused. */
  file: string;
  migrations?: readonly Migration[];
  clock?: Clock;
}

export interface MigrationOutcome {
  from: number;
  to: number;
  applied: string[];
}

interface AppliedRow {
  version: number;
  name: string | null;
  sha256: string | null;
}

const CREATE_SCHEMA_MIGRATIONS = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT,
  sha256     TEXT,
  applied_at TEXT
) STRICT`;

/**
 * Brings the database to the newest known schema in ONE immediate transaction: either every
 * pending migration applies, or none does. Refuses a database from the future, and one whose
 * applied migrations no longer hash like the code (an edited migration would leave databases
 * that claim the same version but differ).
 */
export function migrateDatabase(db: Database.Database, options: MigrateOptions): MigrationOutcome {
  const { file, migrations = MIGRATIONS, clock = () => new Date() } = options;
  const latest = migrations.at(-1)?.version ?? 0;
  const current = db.pragma('user_version', { simple: true }) as number;
  // PRAGMA foreign_keys is a no-op inside a transaction: it is switched before and after.
  const rebuilds = migrations.some((m) => m.version > current && m.foreignKeysOff === true);
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  if (rebuilds) db.pragma('foreign_keys = OFF');
  try {
    return apply(db, file, migrations, latest, clock, rebuilds);
  } finally {
    if (rebuilds) db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
  }
}

function apply(
  db: Database.Database,
  file: string,
  migrations: readonly Migration[],
  latest: number,
  clock: Clock,
  checkForeignKeys: boolean,
): MigrationOutcome {
  // Read and write under one write lock: two processes opening a fresh file at once must not
  // both decide to apply 001.
  return db
    .transaction((): MigrationOutcome => {
      const current = refuseFutureSchema(db, file, latest);
      verifyApplied(db, file, migrations, current);
      const pending = migrations.filter((m) => m.version > current);
      if (pending.length === 0) return { from: current, to: current, applied: [] };

      db.exec(CREATE_SCHEMA_MIGRATIONS);
      const record = db.prepare('INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES (?, ?, ?, ?)');
      for (const migration of pending) {
        try {
          db.exec(migration.sql);
        } catch (err) {
          const translated = translateSqliteError(err, file);
          if (translated instanceof StoreError && ['full', 'readonly', 'io', 'busy'].includes(translated.code)) throw translated;
          const reason = err instanceof Error ? err.message : String(err);
          throw new StoreError(
            `could not apply migration ${migrationLabel(migration)} to ${file}: ${reason}. ` +
              `Nothing was changed; the database stays at schema version ${current}.`,
            'migration',
            file,
            { cause: err },
          );
        }
        record.run(migration.version, migration.name, sha256Hex(migration.sql), clock().toISOString());
      }
      if (checkForeignKeys) {
        const broken = db.pragma('foreign_key_check') as { table: string; rowid: number; parent: string }[];
        if (broken.length > 0) {
          const first = broken[0];
          throw new StoreError(
            `could not apply the migrations to ${file}: ${broken.length} row(s) would break a foreign key (e.g. ${first?.table} row ${first?.rowid} → ${first?.parent}). ` +
              `Nothing was changed; the database stays at schema version ${current}.`,
            'migration',
            file,
          );
        }
      }
      // user_version is written inside the transaction, so it commits or rolls back with the schema.
      db.pragma(`user_version = ${latest}`);
      return { from: current, to: latest, applied: pending.map(migrationLabel) };
    })
    .immediate();
}

/** Returns the database's schema version, or refuses one newer than `latest`. */
export function refuseFutureSchema(db: Database.Database, file: string, latest: number): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > latest) {
    throw new StoreError(
      `${file} has schema version ${current}, but this build of Backfill Runbook knows only up to version ${latest}. ` +
        'Open it with a newer Backfill Runbook build; this one will not change it.',
      'future',
      file,
    );
  }
  return current;
}

function verifyApplied(db: Database.Database, file: string, migrations: readonly Migration[], current: number): void {
  const hasTable = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
  const rows = hasTable ? db.prepare<[], AppliedRow>('SELECT version, name, sha256 FROM schema_migrations ORDER BY version').all() : [];
  const recorded = new Map(rows.map((row) => [row.version, row]));
  function refuse(what: string): never {
    throw new StoreError(
      `${file} does not match this build of Backfill Runbook: ${what}. ` +
        'A released migration must never be edited or removed; restore it and add a new migration instead. ' +
        'The database was not changed.',
      'tampered',
      file,
    );
  }
  for (const migration of migrations) {
    if (migration.version > current) break;
    const row = recorded.get(migration.version);
    recorded.delete(migration.version);
    if (row === undefined)
      refuse(`migration ${migrationLabel(migration)} is not recorded as applied though the schema version is ${current}`);
    const expected = sha256Hex(migration.sql);
    if (row.sha256 !== expected) {
      refuse(
        `migration ${migrationLabel(migration)} was applied with sha256 ${row.sha256 ?? 'null'}, but the code now has sha256 ${expected}`,
      );
    }
  }
  for (const row of recorded.values()) {
    refuse(
      `schema_migrations records migration ${row.version} (${row.name ?? 'unnamed'}), which this build does not have at schema version ${current}`,
    );
  }
}
