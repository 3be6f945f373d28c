import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { guardRepo, StoreError, translateSqliteError } from './errors.ts';
import { migrateDatabase, refuseFutureSchema } from './migrate.ts';
import { MIGRATIONS, type Migration } from './migrations/index.ts';
import { createAuditRepo, type AuditRepo } from './repos/audit.ts';
import { createCounterRefresher } from './repos/counters.ts';
import { createEvidenceRepo, type EvidenceRepo } from './repos/evidence.ts';
import { createHistoryRepo, type HistoryRepo } from './repos/history.ts';
import { createJobsRepo, type JobsRepo } from './repos/jobs.ts';
import { createPartitionsRepo, type PartitionsRepo } from './repos/partitions.ts';
import { createPlansRepo, type PlansRepo } from './repos/plans.ts';
import { createRunsRepo, type RunsRepo } from './repos/runs.ts';
import type { Clock } from './types.ts';

export interface StoreOptions {
  /** Where "now" comes from; defaults to the system clock. */
  clock?: Clock;
  /** The migration registry; only tests pass anything but the default. */
  migrations?: readonly Migration[];
}

export interface Store {
  readonly file: string;
  readonly db: Database.Database;
  /** user_version after migrating: the newest migration this build knows. */
  readonly schemaVersion: number;
  readonly jobs: JobsRepo;
  readonly plans: PlansRepo;
  readonly runs: RunsRepo;
  readonly partitions: PartitionsRepo;
  readonly audit: AuditRepo;
  readonly evidence: EvidenceRepo;
  /** the History view's queries: paged runs, a run's timeline */
  readonly history: HistoryRepo;
  close(): void;
  /**
   * Runs fn in one immediate SQLite transaction (nested repo calls become savepoints).
   * **Important**: fn must be synchronous; an await inside would commit half the work.
   */
  transaction<T>(fn: () => T): T;
}

const isMemory = (file: string) => file === ':memory:' || file === '';

/**
 * Opens (creating if needed) the local store and migrates it to the newest schema.
 * Throws StoreError for a database from the future, an edited migration, a file that is not
 * SQLite, or a disk that cannot be written.
 */
export function openStore(file: string, options: StoreOptions = {}): Store {
  const clock = options.clock ?? (() => new Date());
  const migrations = options.migrations ?? MIGRATIONS;
  if (!isMemory(file)) {
    try {
      mkdirSync(dirname(resolve(file)), { recursive: true });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new StoreError(`cannot create the folder for ${file}: ${reason}`, 'io', file, { cause: err });
    }
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(file);
    db.pragma('busy_timeout = 5000');
    // The first read of the file (a text file fails here with SQLITE_NOTADB), and before
    // journal_mode, which would rewrite the header of a database from the future.
    refuseFutureSchema(db, file, migrations.at(-1)?.version ?? 0);
    if (!isMemory(file)) db.pragma('journal_mode = WAL');
    // FULL even in WAL: a published partition must survive a power cut once recorded.
    // NORMAL in WAL mode survives any process crash; only a power cut can lose the last
    // commits, and those are recovered from the target's markers on resume (docs/design.md §6).
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    const { to } = migrateDatabase(db, { file, clock, migrations });
    return assemble(db, file, clock, to);
  } catch (err) {
    if (db?.open) db.close();
    throw translateSqliteError(err, file);
  }
}

function assemble(db: Database.Database, file: string, clock: Clock, schemaVersion: number): Store {
  const audit = createAuditRepo(db, clock);
  const refreshCounters = createCounterRefresher(db, clock);
  return {
    file,
    db,
    schemaVersion,
    jobs: guardRepo(file, createJobsRepo(db, clock, audit)),
    plans: guardRepo(file, createPlansRepo(db, clock, audit)),
    runs: guardRepo(file, createRunsRepo(db, clock, audit, refreshCounters)),
    partitions: guardRepo(file, createPartitionsRepo(db, clock, audit, refreshCounters)),
    audit: guardRepo(file, audit),
    evidence: guardRepo(file, createEvidenceRepo(db, clock, audit)),
    history: guardRepo(file, createHistoryRepo(db)),
    close: () => {
      if (db.open) db.close();
    },
    transaction: <T>(fn: () => T): T => {
      try {
        return db.transaction(fn).immediate();
      } catch (err) {
        throw translateSqliteError(err, file);
      }
    },
  };
}
