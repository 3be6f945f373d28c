import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../electron/engine/store/index.ts';

// The schema's own guarantees, checked with raw SQL so they hold even for code that bypasses
// the repositories.

const clock = () => new Date('2026-11-30T12:00:00.000Z');
let store: Store;

beforeEach(() => {
  store = openStore(':memory:', { clock });
  store.plans.save({ planHash: 'p1', requestId: 'REQ-1', jobName: 'daily_revenue', plan: {} });
  store.runs.create({
    runId: 'r1',
    jobName: 'daily_revenue',
    planHash: 'p1',
    jobHash: 'j1',
    kind: 'execute',
    actor: 'ana',
    partitions: [{ key: '2026-05-01' }, { key: '2026-05-02' }],
  });
});
afterEach(() => store.close());

const insertRun = `INSERT INTO runs (run_id, job_name, plan_hash, job_hash, kind, status, created_at, updated_at)
  VALUES (@runId, 'j', @planHash, 'h', @kind, @status, 't', 't')`;
const goodRun = { runId: 'r2', planHash: 'p1', kind: 'execute', status: 'planned' };

describe('STRICT tables', () => {
  it.each<[string, string, unknown[], string]>([
    [
      'text in an INTEGER column',
      "INSERT INTO partitions (run_id, partition_key, seq) VALUES ('r1', 'k', ?)",
      ['third'],
      'cannot store TEXT value in INTEGER column partitions.seq',
    ],
    [
      'a real in an INTEGER column',
      "UPDATE runs SET rows_written = ? WHERE run_id = 'r1'",
      [1.5],
      'cannot store REAL value in INTEGER column runs.rows_written',
    ],
    [
      'a blob in a TEXT column',
      "UPDATE runs SET cursor = ? WHERE run_id = 'r1'",
      [Buffer.from('x')],
      'cannot store BLOB value in TEXT column runs.cursor',
    ],
    [
      'text as an audit seq (a rowid)',
      "INSERT INTO audit_log (seq, at, entity, entity_id, event, actor) VALUES (?, 't', 'e', 'i', 'v', 'a')",
      ['one'],
      'datatype mismatch',
    ],
    [
      'text in an INTEGER counter',
      "UPDATE partitions SET attempt = ? WHERE run_id = 'r1'",
      ['2 times'],
      'cannot store TEXT value in INTEGER column partitions.attempt',
    ],
  ])('refuse %s', (_case, sql, params, message) => {
    expect(() => store.db.prepare(sql).run(...params)).toThrow(message);
  });
});

describe('constraints', () => {
  it.each<[string, () => unknown, string]>([
    ['a run for an unknown plan', () => store.db.prepare(insertRun).run({ ...goodRun, planHash: 'nope' }), 'FOREIGN KEY constraint failed'],
    [
      'a partition for an unknown run',
      () => store.db.prepare("INSERT INTO partitions (run_id, partition_key, seq) VALUES ('ghost', 'k', 0)").run(),
      'FOREIGN KEY constraint failed',
    ],
    [
      'evidence for an unknown run',
      () =>
        store.db
          .prepare("INSERT INTO evidence (run_id, kind, created_at, body_json, body_sha256) VALUES ('ghost', 'k', 't', '{}', 'h')")
          .run(),
      'FOREIGN KEY constraint failed',
    ],
    ['an unknown run kind', () => store.db.prepare(insertRun).run({ ...goodRun, kind: 'maybe' }), 'CHECK constraint failed'],
    ['an unknown run status', () => store.db.prepare(insertRun).run({ ...goodRun, status: 'done' }), 'CHECK constraint failed'],
    ['an unknown partition status', () => store.db.prepare("UPDATE partitions SET status = 'done'").run(), 'CHECK constraint failed'],
    [
      'a repeated seq within a run',
      () => store.db.prepare("UPDATE partitions SET seq = 0 WHERE partition_key = '2026-05-02'").run(),
      'UNIQUE constraint failed: partitions.run_id, partitions.seq',
    ],
    ['settings that are not JSON', () => store.db.prepare("UPDATE runs SET settings_json = '{oops'").run(), 'CHECK constraint failed'],
  ])('refuse %s', (_case, write, message) => {
    expect(write).toThrow(message);
  });

  it('deleting a run takes its partitions with it', () => {
    store.db.prepare("DELETE FROM runs WHERE run_id = 'r1'").run();
    expect(store.db.prepare('SELECT count(*) FROM partitions').pluck().get()).toBe(0);
  });
});

describe('audit_log is append-only', () => {
  it.each([
    ["UPDATE audit_log SET actor = 'mallory'"],
    ['DELETE FROM audit_log'],
    ["UPDATE audit_log SET detail_json = '{}' WHERE seq = 1"],
  ])('%s is refused', (sql) => {
    expect(() => store.db.exec(sql)).toThrow('audit_log is append-only');
    expect(store.db.prepare('SELECT actor FROM audit_log ORDER BY seq').pluck().all()).toEqual(['system', 'ana']);
  });
});

describe('query plans', () => {
  const plan = (sql: string, ...params: unknown[]) =>
    store.db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...params)
      .map((row) => row.detail);

  it.each<[string, string, unknown[], string]>([
    [
      'partitions by run and status',
      'SELECT * FROM partitions WHERE run_id = ? AND status = ? ORDER BY seq',
      ['r1', 'pending'],
      'SEARCH partitions USING INDEX partitions_by_status (run_id=? AND status=?)',
    ],
    [
      'partitions by run and status, unordered',
      'SELECT * FROM partitions WHERE run_id = ? AND status = ?',
      ['r1', 'failed'],
      'SEARCH partitions USING INDEX partitions_by_status (run_id=? AND status=?)',
    ],
    [
      'counts by status',
      'SELECT status, count(*) FROM partitions WHERE run_id = ? GROUP BY status',
      ['r1'],
      'SEARCH partitions USING COVERING INDEX partitions_by_status (run_id=?)',
    ],
    [
      'partitions in order',
      'SELECT * FROM partitions WHERE run_id = ? ORDER BY seq',
      ['r1'],
      'SEARCH partitions USING INDEX partitions_by_seq (run_id=?)',
    ],
    [
      'one partition',
      'SELECT * FROM partitions WHERE run_id = ? AND partition_key = ?',
      ['r1', 'k'],
      'SEARCH partitions USING INDEX sqlite_autoindex_partitions_1 (run_id=? AND partition_key=?)',
    ],
    [
      "a run's audit trail",
      'SELECT * FROM audit_log WHERE run_id = ? AND seq > ? ORDER BY seq',
      ['r1', 0],
      'SEARCH audit_log USING INDEX audit_log_by_run (run_id=? AND seq>?)',
    ],
    [
      'the latest evidence',
      'SELECT * FROM evidence WHERE plan_hash = ? AND kind = ? ORDER BY id DESC LIMIT 1',
      ['p1', 'k'],
      'SEARCH evidence USING INDEX evidence_by_plan (plan_hash=? AND kind=?)',
    ],
  ])('%s uses its index', (_case, sql, params, expected) => {
    // Exactly one step: no full scan, and no temporary B-tree to sort or group.
    expect(plan(sql, ...params)).toEqual([expected]);
  });
});
