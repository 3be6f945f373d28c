/**
 * Migration 006 (canary and abandoned run statuses) rebuilds `runs`, which partitions, evidence
 * and imported archives reference: migrated from version 5 with data in every referencing table,
 * nothing is lost or cascaded away, the new statuses are accepted and others still refused, the
 * indexes are back, and foreign keys are on again afterwards.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, migrateDatabase, StoreError, type Migration } from '../../electron/engine/store/index.ts';

const clock = () => new Date('2026-11-30T12:00:00.000Z');
const upTo = (v: number): Migration[] => MIGRATIONS.filter((m) => m.version <= v);

function version5WithARun(): Database.Database {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  migrateDatabase(db, { file: 'v5.db', migrations: upTo(5), clock });
  db.exec(`
    INSERT INTO plans VALUES ('p1', 'bf-1', 'job', '{}', '2026-01-01T00:00:00.000Z');
    INSERT INTO runs (run_id, job_name, plan_hash, job_hash, kind, status, partitions_total, created_at, updated_at)
      VALUES ('bf-1', 'job', 'p1', 'j1', 'execute', 'halted', 2, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
    INSERT INTO partitions (run_id, partition_key, seq, status) VALUES ('bf-1', '2026-05-01', 0, 'published'), ('bf-1', '2026-05-02', 1, 'pending');
    INSERT INTO evidence (run_id, plan_hash, kind, created_at, body_json, body_sha256) VALUES ('bf-1', 'p1', 'dry-run', '2026-01-01T00:00:00.000Z', '{}', 'x');
  `);
  return db;
}

describe('migration 006: canary and abandoned run statuses', () => {
  it('keeps every run and every row that references one, and foreign keys stay on', () => {
    const db = version5WithARun();
    expect(migrateDatabase(db, { file: 'v5.db', clock })).toMatchObject({ from: 5, to: 6, applied: ['006_canary_status'] });
    expect(db.prepare('SELECT run_id, status, partitions_total FROM runs').all()).toEqual([
      { run_id: 'bf-1', status: 'halted', partitions_total: 2 },
    ]);
    expect(db.prepare('SELECT count(*) FROM partitions').pluck().get()).toBe(2);
    expect(db.prepare('SELECT count(*) FROM evidence').pluck().get()).toBe(1);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    // Still enforced: a partition of a run that does not exist is refused.
    expect(() => db.exec(`INSERT INTO partitions (run_id, partition_key, seq) VALUES ('nope', 'k', 0)`)).toThrow(/FOREIGN KEY/);
    db.close();
  });

  it('accepts canary and abandoned, still refuses an unknown status, and has its indexes back', () => {
    const db = version5WithARun();
    migrateDatabase(db, { file: 'v5.db', clock });
    for (const status of ['canary', 'abandoned']) db.prepare('UPDATE runs SET status = ? WHERE run_id = ?').run(status, 'bf-1');
    expect(() => db.prepare('UPDATE runs SET status = ? WHERE run_id = ?').run('bogus', 'bf-1')).toThrow(/CHECK constraint/);
    const plan = db.prepare("EXPLAIN QUERY PLAN SELECT * FROM runs WHERE job_name = 'job' ORDER BY created_at").all() as {
      detail: string;
    }[];
    expect(plan.map((p) => p.detail).join(' ')).toContain('USING INDEX runs_by_job');
    expect(
      db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'runs' AND name LIKE 'runs_by%' ORDER BY 1")
        .pluck()
        .all(),
    ).toEqual(['runs_by_created', 'runs_by_job']);
    db.close();
  });

  it('refuses to commit a rebuild that would break a foreign key, and leaves foreign keys on', () => {
    const db = version5WithARun();
    const dropsRuns: Migration = { version: 6, name: 'drops_runs', foreignKeysOff: true, sql: 'DELETE FROM runs;' };
    let err: unknown;
    try {
      migrateDatabase(db, { file: 'v5.db', migrations: [...upTo(5), dropsRuns], clock });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).message).toBe(
      'could not apply the migrations to v5.db: 3 row(s) would break a foreign key (e.g. evidence row 1 → runs). Nothing was changed; the database stays at schema version 5.',
    );
    expect(db.pragma('user_version', { simple: true })).toBe(5);
    expect(db.prepare('SELECT count(*) FROM runs').pluck().get()).toBe(1);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    db.close();
  });
});
