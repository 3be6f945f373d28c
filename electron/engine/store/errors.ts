import Database from 'better-sqlite3';

/**
 * What went wrong with the local store, as a word a caller can switch on. The executor halts
 * on 'full', 'readonly' and 'io': continuing would publish partitions the ledger cannot record.
 */
export type StoreErrorCode =
  | 'future' // the database was written by a newer build
  | 'tampered' // an applied migration no longer matches the code
  | 'not-a-database' // the file is not SQLite
  | 'corrupt'
  | 'migration' // a migration failed to apply
  | 'full'
  | 'readonly'
  | 'io'
  | 'busy' // another process held the database longer than busy_timeout
  | 'constraint'
  | 'exists'
  | 'not-found'
  | 'transition' // a partition status change the ledger does not allow
  | 'invalid';

export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    message: string,
    readonly code: StoreErrorCode,
    readonly file?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Turns a better-sqlite3 error into a StoreError that names the file and says what to do.
 * Anything that is not an SQLite error (a bug, a TypeError) passes through untouched.
 */
export function translateSqliteError(err: unknown, file: string): unknown {
  if (err instanceof StoreError || !(err instanceof Database.SqliteError)) return err;
  const sqlite = `${err.code}: ${err.message}`;
  const fail = (code: StoreErrorCode, message: string) => new StoreError(message, code, file, { cause: err });
  if (err.code === 'SQLITE_FULL') {
    return fail(
      'full',
      `the disk holding ${file} is full (${sqlite}); the last step was not recorded. Free disk space, then resume the run.`,
    );
  }
  if (err.code.startsWith('SQLITE_READONLY')) {
    return fail(
      'readonly',
      `${file} cannot be written (${sqlite}); the last step was not recorded. Check the permissions of the file and its folder, then resume the run.`,
    );
  }
  if (err.code.startsWith('SQLITE_IOERR')) {
    return fail(
      'io',
      `the disk failed while using ${file} (${sqlite}); the last step was not recorded. Check the disk, then resume the run.`,
    );
  }
  if (err.code.startsWith('SQLITE_CANTOPEN')) {
    return fail('io', `cannot open ${file} (${sqlite}). Check that it is a file (not a folder) you may read and write.`);
  }
  if (err.code === 'SQLITE_NOTADB') {
    return fail(
      'not-a-database',
      `${file} is not a Backfill Runbook database (${sqlite}). Choose another file, or move this one aside so a new database can be created.`,
    );
  }
  if (err.code.startsWith('SQLITE_CORRUPT')) {
    return fail('corrupt', `${file} is damaged (${sqlite}). Restore it from a backup; do not keep writing to it.`);
  }
  if (err.code.startsWith('SQLITE_BUSY') || err.code.startsWith('SQLITE_LOCKED')) {
    return fail(
      'busy',
      `${file} is locked by another process (${sqlite}). Close the other Backfill Runbook window or run, then try again.`,
    );
  }
  if (err.code.startsWith('SQLITE_CONSTRAINT')) {
    return fail('constraint', `a write to ${file} broke a rule of its schema (${sqlite})`);
  }
  return err;
}

/**
 * Wraps every method of a repository so SQLite errors surface as StoreErrors. Repositories
 * call each other unwrapped; only the objects handed out by the Store are wrapped.
 */
export function guardRepo<T extends object>(file: string, repo: T): T {
  const guarded: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(repo)) {
    if (typeof member !== 'function') {
      guarded[name] = member;
      continue;
    }
    const method = member as (...args: unknown[]) => unknown;
    guarded[name] = (...args: unknown[]): unknown => {
      try {
        return method(...args);
      } catch (err) {
        throw translateSqliteError(err, file);
      }
    };
  }
  return guarded as T;
}
