import { afterEach, describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { openStore, type Store } from '../../electron/engine/store/index.ts';
import { migration003 } from '../../electron/engine/store/migrations/003_s3_ledger.ts';
import { S3Ledger } from '../../electron/engine/targets/s3/ledger.ts';

let store: Store | undefined;
afterEach(() => store?.close());

describe('migration 003: the S3 side of the ledger', () => {
  it('creates STRICT tables for S3 effects and partition locks, and indexes effects by partition', () => {
    store = openStore(':memory:');
    expect(store.schemaVersion).toBeGreaterThanOrEqual(3);
    const tables = store.db
      .prepare(`select name, sql from sqlite_schema where type = 'table' and name like 's3_%' order by name`)
      .all() as { name: string; sql: string }[];
    expect(tables.map((t) => [t.name, t.sql.trimEnd().endsWith('STRICT')])).toEqual([
      ['s3_effects', true],
      ['s3_partition_locks', true],
    ]);
    const plan = store.db.prepare(`explain query plan select * from s3_effects where bucket = 'b' and stem = 's' order by id`).all() as {
      detail: string;
    }[];
    expect(plan.map((p) => p.detail).join(' ')).toContain('USING INDEX s3_effects_by_stem');
    expect(migration003.version).toBe(3);
  });

  it('refuses an upload without its id', () => {
    store = openStore(':memory:');
    expect(() =>
      store?.db
        .prepare(
          `insert into s3_effects (run_id, partition_key, bucket, stem, kind, object_key, created_at) values ('r', 'p', 'b', 's', 'upload', 'k', 'now')`,
        )
        .run(),
    ).toThrow('CHECK constraint failed');
  });
});

describe('S3Ledger', () => {
  it('records effects per partition stem and forgets them once settled', () => {
    store = openStore(':memory:');
    const ledger = new S3Ledger(store);
    ledger.recordObject('run-1', '2026-01-20T19', 'b', 'p/p_2026-01-20_19', 'p/p_2026-01-20_19#0.aa.json.gz');
    ledger.recordUpload('run-1', '2026-01-20T19', 'b', 'p/p_2026-01-20_19', 'p/p_2026-01-20_19#0.aa.json.gz', 'upload-1');
    ledger.recordObject('run-1', '2026-01-20T20', 'b', 'p/p_2026-01-20_20', 'p/p_2026-01-20_20#0.bb.json.gz');
    const effects = ledger.effectsOf('b', 'p/p_2026-01-20_19');
    expect(effects.map((e) => [e.kind, e.objectKey, e.uploadId])).toEqual([
      ['object', 'p/p_2026-01-20_19#0.aa.json.gz', null],
      ['upload', 'p/p_2026-01-20_19#0.aa.json.gz', 'upload-1'],
    ]);
    // the run is on no record, so nobody is executing it: its effects are abandoned
    expect(ledger.abandonedEffects('b')).toHaveLength(3);
    ledger.forget(effects.map((e) => e.id));
    expect(ledger.effectsOf('b', 'p/p_2026-01-20_19')).toEqual([]);
    expect(ledger.effectsOf('b', 'p/p_2026-01-20_20')).toHaveLength(1);
  });

  it("locks a partition for one writer; a dead writer's lock is taken over", () => {
    store = openStore(':memory:');
    const ledger = new S3Ledger(store);
    expect(ledger.lock('b', 'stem', 'run-1')).toBe(true);
    expect(ledger.lock('b', 'stem', 'run-1')).toBe(true); // re-entrant for its owner
    store.db.prepare(`update s3_partition_locks set owner = 'elsewhere:1' where stem = 'stem'`).run();
    expect(ledger.lock('b', 'stem', 'run-2')).toBe(false);
    expect(ledger.lockHolder('b', 'stem')).toBe('run run-1 (elsewhere:1)');
    // a process of this machine that no longer exists holds nothing
    store.db.prepare(`update s3_partition_locks set owner = ? where stem = 'stem'`).run(`${hostname()}:2147483646`);
    expect(ledger.lock('b', 'stem', 'run-2')).toBe(true);
    ledger.unlock('b', 'stem');
    expect(ledger.lockHolder('b', 'stem')).toBeUndefined();
  });
});
