import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import canonicalize from 'canonicalize';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entryHash, GENESIS_HASH, type ChainedEntry } from '../../electron/engine/evidence/chain.ts';
import { verifyChain } from '../../electron/engine/evidence/verifyChain.ts';
import { migrateDatabase, MIGRATIONS, openStore, type Migration, type Store } from '../../electron/engine/store/index.ts';

let nowMs = 0;
const clock = () => new Date(nowMs);
let store: Store;
beforeEach(() => {
  nowMs = Date.parse('2026-11-30T12:00:00.000Z');
  store = openStore(':memory:', { clock });
});
afterEach(() => store.close());

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const jcs = canonicalize as unknown as (v: unknown) => string;

function appendFive(): ChainedEntry[] {
  for (let i = 1; i <= 5; i++) {
    nowMs += 1000;
    store.audit.append({
      runId: null,
      entity: 'test',
      entityId: `e${i}`,
      event: `test.${i}`,
      actor: 'ana',
      detail: { n: i, z: 'last', a: [1, 'x'] },
    });
  }
  return store.audit.chain();
}

describe('the audit chain', () => {
  it('hashes SHA-256(prev_hash ‖ RFC 8785 JSON of the entry), from 64 zeros', () => {
    const [first, second] = appendFive();
    const content = {
      seq: 1,
      at: '2026-11-30T12:00:01.000Z',
      runId: null,
      entity: 'test',
      entityId: 'e1',
      event: 'test.1',
      fromStatus: null,
      toStatus: null,
      actor: 'ana',
      detail: { n: 1, z: 'last', a: [1, 'x'] },
    };
    expect(jcs(content)).toBe(
      '{"actor":"ana","at":"2026-11-30T12:00:01.000Z","detail":{"a":[1,"x"],"n":1,"z":"last"},"entity":"test","entityId":"e1","event":"test.1","fromStatus":null,"runId":null,"seq":1,"toStatus":null}',
    );
    expect(first).toMatchObject({ prevHash: GENESIS_HASH, hash: sha256(GENESIS_HASH + jcs(content)) });
    expect(second?.prevHash).toBe(first?.hash);
    expect(store.audit.head()).toEqual({ seq: 5, hash: store.audit.chain().at(-1)?.hash });
  });

  it('chains entries written inside other repositories’ transactions', () => {
    store.plans.save({ planHash: 'p1', requestId: 'R', jobName: 'j', plan: {} });
    store.runs.create({
      runId: 'r1',
      jobName: 'j',
      planHash: 'p1',
      jobHash: 'h',
      kind: 'execute',
      actor: 'ana',
      partitions: [{ key: 'k1' }],
    });
    store.partitions.transition('r1', 'k1', 'running', {}, 'ana');
    expect(verifyChain(store.audit.chain(), { fromGenesis: true })).toMatchObject({ count: 3, broken: null, head: { seq: 3 } });
  });

  it('refuses rows written around the repository, and keeps refusing updates and deletes', () => {
    appendFive();
    expect(() =>
      store.db.prepare("INSERT INTO audit_log (at, entity, entity_id, event, actor) VALUES ('t', 'e', 'i', 'v', 'a')").run(),
    ).toThrow('audit_log entries carry prev_hash and hash: append through the audit repository');
    expect(() => store.db.exec("UPDATE audit_log SET hash = '" + '1'.repeat(64) + "' WHERE seq = 2")).toThrow('audit_log is append-only');
    expect(() => store.db.exec('DELETE FROM audit_log WHERE seq = 5')).toThrow('audit_log is append-only');
  });
});

describe('verifyChain names the first break', () => {
  const label = (e: ChainedEntry) => `seq ${e.seq} (${e.event}, ${e.at})`;
  it.each<[string, (c: ChainedEntry[]) => ChainedEntry[], (c: ChainedEntry[]) => { kind: string; seq: number; message: string } | null]>([
    ['nothing when intact', (c) => c, () => null],
    [
      'an edited field',
      (c) => c.map((e) => (e.seq === 3 ? { ...e, actor: 'mallory' } : e)),
      (c) => ({
        kind: 'edited',
        seq: 3,
        message: `entry seq 3 (test.3, 2026-11-30T12:00:03.000Z) was changed after it was written: its content no longer matches its hash ${c[2]?.hash.slice(0, 12)}…`,
      }),
    ],
    [
      'an altered hash',
      (c) => c.map((e) => (e.seq === 3 ? { ...e, hash: 'f'.repeat(64) } : e)),
      () => ({
        kind: 'hash-altered',
        seq: 3,
        message:
          'entry seq 3 (test.3, 2026-11-30T12:00:03.000Z) had its stored hash altered to ffffffffffff… (its content still matches the link from seq 4)',
      }),
    ],
    [
      'a deleted entry',
      (c) => c.filter((e) => e.seq !== 3),
      (c) => ({
        kind: 'deleted',
        seq: 3,
        message: `entry seq 3 is missing (deleted): the log goes from ${label(c[1] as ChainedEntry)} to ${label(c[3] as ChainedEntry)}`,
      }),
    ],
    [
      'the first entries deleted',
      (c) => c.slice(2),
      (c) => ({
        kind: 'deleted',
        seq: 1,
        message: `entry seq 1–2 are missing (deleted): the log goes from its start to ${label(c[2] as ChainedEntry)}`,
      }),
    ],
    [
      'a swapped pair (a bundle: array order)',
      (c) => [c[0], c[1], c[3], c[2], c[4]] as ChainedEntry[],
      (c) => ({
        kind: 'reordered',
        seq: 3,
        message: `entries seq 3 and 4 were swapped: the log lists ${label(c[3] as ChainedEntry)} before ${label(c[2] as ChainedEntry)}`,
      }),
    ],
    [
      'a swapped pair (a database: contents exchanged between seq slots)',
      (c) => [c[0], c[1], { ...(c[3] as ChainedEntry), seq: 3 }, { ...(c[2] as ChainedEntry), seq: 4 }, c[4]] as ChainedEntry[],
      () => ({ kind: 'reordered', seq: 3, message: "entries seq 3 and 4 were swapped: each holds the other's content (test.4 / test.3)" }),
    ],
  ])('%s', (_case, tamper, expected) => {
    const chain = appendFive();
    const broken = verifyChain(tamper(structuredClone(chain)), { fromGenesis: true }).broken;
    expect(broken).toEqual(expected(chain));
  });

  it('reports a forged link where the hash is recomputed but the link is not', () => {
    const chain = appendFive();
    const forged = structuredClone(chain);
    const e = forged[3] as ChainedEntry;
    e.prevHash = 'b'.repeat(64);
    e.hash = entryHash(e.prevHash, e);
    (forged[4] as ChainedEntry).prevHash = e.hash;
    (forged[4] as ChainedEntry).hash = entryHash(e.hash, forged[4] as ChainedEntry);
    expect(verifyChain(forged, { fromGenesis: true }).broken).toEqual({
      kind: 'unlinked',
      seq: 4,
      message: `entry seq 4 (test.4, 2026-11-30T12:00:04.000Z) does not follow seq 3: it records prev_hash bbbbbbbbbbbb… but seq 3 hashes to ${chain[2]?.hash.slice(0, 12)}…`,
    });
  });
});

describe('migration 002', () => {
  it('chains the audit rows written before it, in seq order, at the next append', () => {
    const db = new Database(':memory:');
    migrateDatabase(db, { file: ':memory:', clock, migrations: [MIGRATIONS[0] as Migration] });
    const insert = db.prepare(
      "INSERT INTO audit_log (at, entity, entity_id, event, actor, detail_json) VALUES (?, 'job', 'j', ?, 'ana', '{\"b\":2,\"a\":1}')",
    );
    insert.run('2026-11-01T00:00:00.000Z', 'job.created');
    insert.run('2026-11-02T00:00:00.000Z', 'job.updated');
    expect(migrateDatabase(db, { file: ':memory:', clock, migrations: MIGRATIONS.slice(0, 2) })).toEqual({
      from: 1,
      to: 2,
      applied: ['002_evidence'],
    });
    expect(db.prepare('SELECT count(*) FROM audit_log WHERE hash IS NULL').pluck().get()).toBe(2);
    db.close();
  });

  it('seals legacy rows through the store and the chain then verifies from the genesis', () => {
    const file = `${process.env.TMPDIR ?? '/tmp'}/evidence-chain-${process.pid}-${Date.now()}.sqlite`;
    // Schema 1 has no chain columns: a database as 001 left it, with one audit row.
    const raw = new Database(file);
    migrateDatabase(raw, { file, clock, migrations: [MIGRATIONS[0] as Migration] });
    raw
      .prepare(
        "INSERT INTO audit_log (at, entity, entity_id, event, actor, detail_json) VALUES ('2026-11-01T00:00:00.000Z', 'job', 'j', 'job.created', 'ana', '{}')",
      )
      .run();
    raw.close();
    const migrated = openStore(file, { clock });
    migrated.audit.append({ entity: 'job', entityId: 'j', event: 'job.updated', actor: 'ana' });
    const chain = migrated.audit.chain();
    expect(chain.map((e) => [e.seq, e.prevHash === GENESIS_HASH])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(verifyChain(chain, { fromGenesis: true }).broken).toBeNull();
    migrated.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  });

  it.each(['evidence', 'identities', 'signoffs', 'audit_checkpoints', 'imported_archives'])('makes %s append-only', (table) => {
    expect(() => store.db.exec(`UPDATE ${table} SET rowid = rowid`)).not.toThrow(); // empty: nothing to refuse yet
    store.evidence.add({ kind: 'k', body: {} });
    if (table === 'evidence') {
      expect(() => store.db.exec("UPDATE evidence SET kind = 'x'")).toThrow('evidence is append-only');
      expect(() => store.db.exec('DELETE FROM evidence')).toThrow('evidence is append-only');
    } else {
      const triggers = store.db
        .prepare<[string], string>("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ? ORDER BY name")
        .pluck()
        .all(table);
      expect(triggers).toEqual([`${table}_no_delete`, `${table}_no_update`]);
    }
  });

  it.each<[string, string, unknown[], string]>([
    [
      'sign-offs of a plan',
      'SELECT * FROM signoffs WHERE plan_hash = ? ORDER BY id',
      ['p'],
      'SEARCH signoffs USING INDEX signoffs_by_plan (plan_hash=?)',
    ],
    [
      'sign-offs of a request',
      'SELECT * FROM signoffs WHERE request_id = ? ORDER BY id',
      ['r'],
      'SEARCH signoffs USING INDEX signoffs_by_request (request_id=?)',
    ],
    [
      'checkpoints in a range',
      'SELECT * FROM audit_checkpoints WHERE seq BETWEEN ? AND ?',
      [1, 9],
      'SEARCH audit_checkpoints USING INDEX audit_checkpoints_by_seq (seq>? AND seq<?)',
    ],
    ['the chain head (the last rowid, read backwards)', 'SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1', [], 'SCAN audit_log'],
  ])('%s uses its index', (_case, sql, params, expected) => {
    const plan = store.db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...params)
      .map((r) => r.detail);
    expect(plan).toEqual([expected]);
  });
});
