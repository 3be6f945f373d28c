import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { guardRepo, translateSqliteError } from '../../electron/engine/store/errors.ts';
import { openStore, StoreError, type Store } from '../../electron/engine/store/index.ts';

// Failures the executor must halt on: the disk fills, the file turns read-only, the disk
// errors. Each must arrive as a StoreError with a code, and leave nothing half-recorded.

const clock = () => new Date('2026-11-30T12:00:00.000Z');
let dir: string;
let file: string;
let store: Store;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'store-errors-'));
  file = join(dir, 'runbook.db');
  store = openStore(file, { clock });
  store.plans.save({ planHash: 'p1', requestId: 'REQ-1', jobName: 'daily_revenue', plan: {} });
  store.runs.create({
    runId: 'r1',
    jobName: 'daily_revenue',
    planHash: 'p1',
    jobHash: 'j1',
    kind: 'execute',
    actor: 'ana',
    partitions: [{ key: 'k1' }],
  });
});
afterEach(() => {
  store.close();
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

const counts = () => ({
  evidence: store.db.prepare('SELECT count(*) FROM evidence').pluck().get(),
  audit: store.db.prepare('SELECT count(*) FROM audit_log').pluck().get(),
});

describe('a full disk', () => {
  it('surfaces as StoreError "full", records nothing, and recovers once there is room', () => {
    // max_page_count caps the file where it is now: the next page needed is "disk full".
    store.db.pragma(`max_page_count = ${String(store.db.pragma('page_count', { simple: true }))}`);
    const before = counts();
    const big = { blob: 'x'.repeat(64 * 1024) };
    const err = storeErrorOf(() => store.evidence.add({ runId: 'r1', kind: 'snapshot', body: big }));
    expect([err.code, err.file]).toEqual(['full', file]);
    expect(err.message).toBe(
      `the disk holding ${file} is full (SQLITE_FULL: database or disk is full); the last step was not recorded. Free disk space, then resume the run.`,
    );
    expect(counts()).toEqual(before);
    expect(store.db.inTransaction).toBe(false);
    store.db.pragma('max_page_count = 1073741823');
    expect(store.evidence.add({ runId: 'r1', kind: 'snapshot', body: big }).id).toBe(1);
  });

  it('rolls back a whole store.transaction', () => {
    store.db.pragma(`max_page_count = ${String(store.db.pragma('page_count', { simple: true }))}`);
    const err = storeErrorOf(() =>
      store.transaction(() => {
        store.partitions.transition('r1', 'k1', 'running', {}, 'executor');
        store.evidence.add({ runId: 'r1', kind: 'snapshot', body: { blob: 'y'.repeat(64 * 1024) } });
      }),
    );
    expect(err.code).toBe('full');
    expect(store.partitions.get('r1', 'k1')).toMatchObject({ status: 'pending', attempt: 0 });
    expect(store.runs.get('r1')?.cursor).toBe('k1');
  });
});

describe('a read-only database', () => {
  it('surfaces as StoreError "readonly"', () => {
    store.db.pragma('query_only = ON');
    const err = storeErrorOf(() => store.partitions.transition('r1', 'k1', 'running', {}, 'executor'));
    expect([err.code, err.message]).toEqual([
      'readonly',
      `${file} cannot be written (SQLITE_READONLY: attempt to write a readonly database); the last step was not recorded. ` +
        'Check the permissions of the file and its folder, then resume the run.',
    ]);
    // Reads still work, so the UI can still show the ledger.
    expect(store.partitions.get('r1', 'k1')?.status).toBe('pending');
  });
});

describe('a database locked by another process', () => {
  it('surfaces as StoreError "busy" once the wait runs out', () => {
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    store.db.pragma('busy_timeout = 0'); // do not wait 5 s in a unit test
    try {
      const err = storeErrorOf(() => store.runs.setStatus('r1', 'running', { actor: 'x' }));
      expect([err.code, err.message]).toEqual([
        'busy',
        `${file} is locked by another process (SQLITE_BUSY: database is locked). Close the other Backfill Runbook window or run, then try again.`,
      ]);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });
});

describe('translating SQLite errors', () => {
  it.each<[string, string, StoreError['code'], string]>([
    [
      'SQLITE_IOERR_WRITE',
      'disk I/O error',
      'io',
      'the disk failed while using f.db (SQLITE_IOERR_WRITE: disk I/O error); the last step was not recorded. Check the disk, then resume the run.',
    ],
    [
      'SQLITE_IOERR_FSYNC',
      'disk I/O error',
      'io',
      'the disk failed while using f.db (SQLITE_IOERR_FSYNC: disk I/O error); the last step was not recorded. Check the disk, then resume the run.',
    ],
    [
      'SQLITE_READONLY_DBMOVED',
      'attempt to write a readonly database',
      'readonly',
      'f.db cannot be written (SQLITE_READONLY_DBMOVED: attempt to write a readonly database); the last step was not recorded. Check the permissions of the file and its folder, then resume the run.',
    ],
    [
      'SQLITE_CORRUPT',
      'database disk image is malformed',
      'corrupt',
      'f.db is damaged (SQLITE_CORRUPT: database disk image is malformed). Restore it from a backup; do not keep writing to it.',
    ],
  ])('%s → %s', (sqliteCode, sqliteMessage, code, message) => {
    const cause = new Database.SqliteError(sqliteMessage, sqliteCode);
    const translated = translateSqliteError(cause, 'f.db');
    expect(translated).toBeInstanceOf(StoreError);
    expect(translated).toMatchObject({ code, message, file: 'f.db', cause });
  });

  it('passes other errors through untouched', () => {
    const bug = new TypeError('x is undefined');
    const unknownSqlite = new Database.SqliteError('no such table: t', 'SQLITE_ERROR');
    expect(translateSqliteError(bug, 'f.db')).toBe(bug);
    expect(translateSqliteError(unknownSqlite, 'f.db')).toBe(unknownSqlite);
  });

  it('guards every repository method', () => {
    const repo = guardRepo('f.db', {
      write: () => {
        throw new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE');
      },
      read: (n: number) => n * 2,
    });
    expect(repo.read(21)).toBe(42);
    expect(storeErrorOf(() => repo.write()).code).toBe('io');
  });
});

describe('store.transaction', () => {
  it('rolls back every write when anything inside throws', () => {
    const auditBefore = counts().audit;
    expect(() =>
      store.transaction(() => {
        store.partitions.transition('r1', 'k1', 'running', {}, 'executor');
        store.partitions.transition('r1', 'k1', 'validated', {}, 'executor');
        store.partitions.transition('r1', 'k1', 'skipped', {}, 'executor');
      }),
    ).toThrow('partition k1 of run r1 cannot go from validated to skipped (from validated it may go to: published, failed, pending)');
    expect(store.partitions.get('r1', 'k1')).toMatchObject({ status: 'pending', attempt: 0 });
    expect(counts().audit).toBe(auditBefore);
  });

  it('returns what the function returns, committed', () => {
    expect(store.transaction(() => store.runs.setStatus('r1', 'running', { actor: 'x' }).status)).toBe('running');
    expect(store.runs.get('r1')?.status).toBe('running');
  });

  it('refuses a function that returns a promise (it would span an await)', () => {
    expect(() => store.transaction(() => Promise.resolve(1))).toThrow('Transaction function cannot return a promise');
  });
});
