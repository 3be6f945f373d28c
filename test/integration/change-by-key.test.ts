/**
 * The change by key on real PostgreSQL, against an oracle computed independently: the source's
 * raw refunds read into the test and aggregated here in JavaScript, diffed by key with the
 * target's rows. Pushdown (full outer join on one server), cross-server (checksum bisection),
 * the grain taken from the source's GROUP BY, and the partition after a run against its
 * snapshot — including scenario 1's case: every total stays equal while refunds move between
 * reasons.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { asPostgresJob, connectionSchema, jobSchema, type PostgresConnection } from '../../shared/schemas.ts';
import type { KeyChange } from '../../shared/keyChange.ts';
import { InputError } from '../../shared/errors.ts';
import type { Partition } from '../../shared/partitions.ts';
import { PostgresPartitionTarget } from '../../electron/engine/targets/postgres/partitionTarget.ts';
import { ClientPool } from '../../electron/engine/targets/postgres/pool.ts';
import { PostgresSnapshots } from '../../electron/engine/snapshot/postgres.ts';
import { prng } from '../support/dataset.ts';
import { adminClient, createTestDatabase, type TestDatabase } from '../support/pg.ts';

const pgA = inject('pgA');
const pgB = inject('pgB');

const REASONS: Record<string, string> = { CR: 'customer_request', DMG: 'damaged', LATE: 'late_delivery', OTH: 'other', DUP: 'duplicate' };
const DAYS = ['2026-05-01', '2026-05-02', '2026-05-03', '2026-05-04', '2026-05-05', '2026-05-06'];
const SOURCE_QUERY = `select cast(r.refunded_at as date) as refund_date, m.reason,
       count(*)::bigint as refunds, sum(r.refund_amount) as refund_amount
  from refunds r join refund_reasons m using (reason_code)
 where r.refunded_at >= :partition_start and r.refunded_at < :partition_end
 group by 1, 2`;
const MART_DDL = `(refund_date date NOT NULL, reason text NOT NULL, refunds bigint NOT NULL, refund_amount numeric(12,2) NOT NULL, PRIMARY KEY (refund_date, reason))`;

let src: TestDatabase; // refunds, reasons and a mart (the pushdown's target)
let far: TestDatabase; // the same mart on another server (bisection's target)

interface RawRefund {
  day: string;
  code: string;
  cents: number;
}
let raw: RawRefund[] = [];

/** Mart rows in JS: key `day|reason` → refunds, cents. */
type Mart = Map<string, { refunds: number; cents: number }>;

function aggregate(rows: RawRefund[], relabel: (code: string) => string = (c) => REASONS[c] ?? c): Mart {
  const mart: Mart = new Map();
  for (const r of rows) {
    const key = `${r.day}|${relabel(r.code)}`;
    const m = mart.get(key) ?? { refunds: 0, cents: 0 };
    m.refunds += 1;
    m.cents += r.cents;
    mart.set(key, m);
  }
  return mart;
}

/** What each day of the mart holds before the backfill (the defects), built from the oracle's own aggregation. */
function damagedMart(): Mart {
  const mart: Mart = new Map();
  const correct = aggregate(raw.filter((r) => r.day !== DAYS[4]));
  const day = (d: number) => [...correct].filter(([k]) => k.startsWith(`${DAYS[d]}|`));
  // Day 0 — scenario 1: "damaged" refunds counted as "other": totals equal, keys move.
  for (const [k, v] of aggregate(
    raw.filter((r) => r.day === DAYS[0]),
    (c) => (c === 'DMG' ? 'other' : (REASONS[c] ?? c)),
  ))
    mart.set(k, v);
  // Day 1: already right.
  for (const [k, v] of day(1)) mart.set(k, v);
  // Day 2: one amount wrong, one key missing (added by the run), one key that should not exist (removed).
  day(2).forEach(([k, v], i) => {
    if (i === 0) mart.set(k, { ...v, cents: v.cents + 500 });
    else if (i !== 1) mart.set(k, v);
  });
  mart.set(`${DAYS[2]}|obsolete`, { refunds: 3, cents: 1234 });
  // Day 3: empty (everything added). Day 4: the source has nothing; two stale rows (removed).
  mart.set(`${DAYS[4]}|other`, { refunds: 1, cents: 100 });
  mart.set(`${DAYS[4]}|damaged`, { refunds: 2, cents: 250 });
  // Day 5: two reasons swapped their counts and amounts: totals equal, two keys changed.
  const five = day(5);
  five.forEach(([k, v], i) => {
    const swap = i === 0 ? five[1] : i === 1 ? five[0] : undefined;
    mart.set(k, swap ? swap[1] : v);
  });
  return mart;
}

const cents = (c: number) => (c / 100).toFixed(2);

async function fillMart(db: TestDatabase, table: string, mart: Mart): Promise<void> {
  await db.client.query(`DROP TABLE IF EXISTS ${table}; CREATE TABLE ${table} ${MART_DDL}`);
  for (const [k, v] of mart) {
    const [day, reason] = k.split('|');
    await db.client.query(`INSERT INTO ${table} VALUES ($1, $2, $3, $4)`, [day, reason, v.refunds, cents(v.cents)]);
  }
}

interface Expected {
  added: string[];
  removed: string[];
  changed: string[];
  columns: { refunds: number; refund_amount: number };
  before: { rows: number; cents: number; refunds: number };
  after: { rows: number; cents: number; refunds: number };
  movedCents: number;
}

/** The oracle: the source recomputed in JS against the mart as the test wrote it, by key. */
function expected(day: string, now: Mart): Expected {
  const after = [...aggregate(raw.filter((r) => r.day === day))];
  const before = [...now].filter(([k]) => k.startsWith(`${day}|`));
  const a = new Map(after);
  const b = new Map(before);
  const out: Expected = {
    added: [],
    removed: [],
    changed: [],
    columns: { refunds: 0, refund_amount: 0 },
    before: { rows: before.length, cents: 0, refunds: 0 },
    after: { rows: after.length, cents: 0, refunds: 0 },
    movedCents: 0,
  };
  for (const [, v] of after) {
    out.after.cents += v.cents;
    out.after.refunds += v.refunds;
  }
  for (const [, v] of before) {
    out.before.cents += v.cents;
    out.before.refunds += v.refunds;
  }
  for (const k of new Set([...a.keys(), ...b.keys()])) {
    const [x, y] = [a.get(k), b.get(k)];
    if (x && !y) out.added.push(k);
    else if (!x && y) out.removed.push(k);
    else if (x && y && (x.refunds !== y.refunds || x.cents !== y.cents)) {
      out.changed.push(k);
      if (x.refunds !== y.refunds) out.columns.refunds++;
      if (x.cents !== y.cents) out.columns.refund_amount++;
    }
    out.movedCents += Math.abs((x?.cents ?? 0) - (y?.cents ?? 0));
  }
  return out;
}

function connection(db: TestDatabase): PostgresConnection {
  const parsed = connectionSchema.parse({ kind: 'postgres', url: db.url, password_env: 'UNUSED' });
  if (parsed.kind !== 'postgres') throw new Error('unreachable');
  return parsed;
}

let jobs = 0;
function target(opts: { across?: boolean; key?: string[]; sourceQuery?: string }): PostgresPartitionTarget {
  const job = asPostgresJob(
    jobSchema.parse({
      name: `cbk-${++jobs}`,
      unit: 'day',
      timezone: 'UTC',
      source: { connection: 'src', query: opts.sourceQuery ?? SOURCE_QUERY },
      target: {
        connection: opts.across ? 'far' : 'src',
        table: 'mart.refund_daily',
        partition_column: 'refund_date',
        key: opts.key ?? ['refund_date', 'reason'],
      },
      write_mode: 'overwrite-partition',
    }),
  );
  const endpoint = (name: string, db: TestDatabase) => ({ name, connection: connection(db), password: db.password });
  return new PostgresPartitionTarget({
    job,
    writeMode: 'overwrite-partition',
    source: endpoint('src', src),
    target: opts.across ? endpoint('far', far) : endpoint('src', src),
  });
}

const partition = (day: string): Partition => {
  const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  return { key: day, start: `${day}T00:00:00+00:00`, end: `${next}T00:00:00+00:00` };
};

const keyOf = (k: (string | null)[]) => k.join('|');

/** Every count, column count, sum and the sample's keys, against the oracle. */
function expectMatches(change: KeyChange, want: Expected): void {
  expect({ added: change.added, removed: change.removed, changed: change.changed }).toEqual({
    added: want.added.length,
    removed: want.removed.length,
    changed: want.changed.length,
  });
  expect(change.before).toBe(want.before.rows);
  expect(change.after).toBe(want.after.rows);
  expect(change.unchanged).toBe(want.after.rows - want.added.length - want.changed.length);
  expect(change.columnChanges).toEqual(want.columns);
  const amount = change.measures.find((m) => m.column === 'refund_amount');
  expect(amount && Math.round(Number(amount.before) * 100)).toBe(want.before.rows === 0 ? 0 : want.before.cents);
  expect(amount && Math.round(Number(amount.after) * 100)).toBe(want.after.rows === 0 ? 0 : want.after.cents);
  expect(amount && Math.round(Number(amount.moved) * 100)).toBe(want.movedCents);
  expect(amount && Math.round(Number(amount.net) * 100)).toBe(want.after.cents - want.before.cents);
  // The sample (limit 50 > any day's changes) names exactly the changed keys, each with its kind.
  const byKind = (kind: string) =>
    change.sample
      .filter((s) => s.kind === kind)
      .map((s) => keyOf(s.key))
      .sort();
  expect(byKind('added')).toEqual([...want.added].sort());
  expect(byKind('removed')).toEqual([...want.removed].sort());
  expect(byKind('changed')).toEqual([...want.changed].sort());
  for (const s of change.sample) {
    expect(s.before === null).toBe(s.kind === 'added');
    expect(s.after === null).toBe(s.kind === 'removed');
  }
}

let mart: Mart;

beforeAll(async () => {
  [src, far] = await Promise.all([createTestDatabase(pgA, 'cbk_src'), createTestDatabase(pgB, 'cbk_far')]);
  const random = prng(16);
  const codes = Object.keys(REASONS);
  raw = [];
  for (const day of DAYS) {
    if (day === DAYS[4]) continue; // the source has nothing that day
    for (let i = 0; i < 40; i++)
      raw.push({ day, code: codes[Math.floor(random() * codes.length)] ?? 'CR', cents: 100 + Math.floor(random() * 9900) });
  }
  await src.client.query(`CREATE TABLE refund_reasons (reason_code text PRIMARY KEY, reason text NOT NULL)`);
  for (const [code, reason] of Object.entries(REASONS))
    await src.client.query(`INSERT INTO refund_reasons VALUES ($1, $2)`, [code, reason]);
  await src.client.query(
    `CREATE TABLE refunds (refund_id int, refunded_at timestamptz NOT NULL, reason_code text NOT NULL, refund_amount numeric(12,2) NOT NULL)`,
  );
  let id = 0;
  for (const r of raw) {
    await src.client.query(`INSERT INTO refunds VALUES ($1, $2::date + interval '13 hours', $3, $4)`, [
      ++id,
      r.day,
      r.code,
      cents(r.cents),
    ]);
  }
  mart = damagedMart();
  for (const db of [src, far]) {
    await db.client.query('CREATE SCHEMA mart');
    await fillMart(db, 'mart.refund_daily', mart);
  }
});

afterAll(async () => {
  await Promise.all([src.drop(), far.drop()]);
});

describe.each([
  ['pushdown: full outer join on one server', false, 'full outer join'],
  ['across servers: checksum bisection', true, 'checksum bisection'],
] as const)('%s', (_, across, method) => {
  it.each(DAYS.map((d, i) => [i, d] as const))('day %i (%s) matches the oracle key by key', async (_i, day) => {
    const t = target({ across });
    try {
      const change = await t.changeByKey(partition(day), { sampleLimit: 50 });
      expect(change.method).toBe(method);
      expect(change.grain).toEqual(['refund_date', 'reason']);
      expect(change.grainFrom).toBe('target.key');
      expectMatches(change, expected(day, mart));
    } finally {
      await t.close();
    }
  });

  it('one target over every day in turn (across servers, later days read every digest at once) still matches the oracle', async () => {
    const t = target({ across });
    try {
      for (const day of DAYS) expectMatches(await t.changeByKey(partition(day), { sampleLimit: 50 }), expected(day, mart));
    } finally {
      await t.close();
    }
  });

  it("scenario 1's day: totals equal, yet 'damaged' is added and 'other' changes — by exactly the damaged refunds", async () => {
    const t = target({ across });
    try {
      const change = await t.changeByKey(partition(DAYS[0] as string));
      const refunds = change.measures.find((m) => m.column === 'refunds');
      const amount = change.measures.find((m) => m.column === 'refund_amount');
      expect(refunds?.net).toBe('0');
      expect(Number(amount?.net)).toBe(0);
      const dmg = raw.filter((r) => r.day === DAYS[0] && r.code === 'DMG');
      expect(dmg.length).toBeGreaterThan(0);
      const dmgCents = dmg.reduce((n, r) => n + r.cents, 0);
      // Moved: "damaged" gains what "other" loses.
      expect(Math.round(Number(amount?.moved) * 100)).toBe(2 * dmgCents);
      const mover = (value: string) => change.movers.find((m) => m.column === 'reason' && m.value === value);
      expect(Math.round(Number(mover('damaged')?.net.refund_amount) * 100)).toBe(dmgCents);
      expect(Math.round(Number(mover('other')?.net.refund_amount) * 100)).toBe(-dmgCents);
      expect(Number(mover('damaged')?.net.refunds)).toBe(dmg.length);
      const damaged = change.sample.find((s) => s.key[1] === 'damaged');
      expect(damaged).toMatchObject({ kind: 'added', before: null, after: [DAYS[0], 'damaged', String(dmg.length), cents(dmgCents)] });
    } finally {
      await t.close();
    }
  });
});

describe('the grain when the target declares no key', () => {
  it("is the source query's GROUP BY (group by 1, 2 → refund_date, reason), on either path", async () => {
    for (const across of [false, true]) {
      const t = target({ across, key: [] });
      try {
        const change = await t.changeByKey(partition(DAYS[2] as string), { sampleLimit: 50 });
        expect(change.grainFrom).toBe('source GROUP BY');
        expect(change.grain).toEqual(['refund_date', 'reason']);
        expectMatches(change, expected(DAYS[2] as string, mart));
      } finally {
        await t.close();
      }
    }
  });
});

describe('a nullable grain column', () => {
  it('matches the NULL group with the NULL group (a changed key, not one removed and one added), on either path', async () => {
    await src.client.query(`CREATE TABLE tag_src (day date NOT NULL, tag text)`);
    await src.client.query(
      `INSERT INTO tag_src VALUES ('2026-05-01', NULL), ('2026-05-01', NULL), ('2026-05-01', 'a'), ('2026-05-01', 'b')`,
    );
    for (const db of [src, far]) {
      await db.client.query(`CREATE TABLE mart.tags (day date NOT NULL, tag text, n bigint NOT NULL)`);
      await db.client.query(`INSERT INTO mart.tags VALUES ('2026-05-01', NULL, 5), ('2026-05-01', 'a', 1), ('2026-05-01', 'c', 1)`);
    }
    for (const across of [false, true]) {
      const job = asPostgresJob(
        jobSchema.parse({
          name: `cbk-tags-${String(across)}`,
          unit: 'day',
          timezone: 'UTC',
          source: {
            connection: 'src',
            query: 'select day, tag, count(*) as n from tag_src where day >= :partition_start and day < :partition_end group by day, tag',
          },
          target: { connection: across ? 'far' : 'src', table: 'mart.tags', partition_column: 'day' },
          write_mode: 'overwrite-partition',
        }),
      );
      const endpoint = (name: string, db: TestDatabase) => ({ name, connection: connection(db), password: db.password });
      const t = new PostgresPartitionTarget({
        job,
        writeMode: 'overwrite-partition',
        source: endpoint('src', src),
        target: across ? endpoint('far', far) : endpoint('src', src),
      });
      try {
        const change = await t.changeByKey(partition('2026-05-01'));
        expect(change.grainFrom).toBe('source GROUP BY');
        expect(change.grain).toEqual(['day', 'tag']);
        expect({ added: change.added, removed: change.removed, changed: change.changed, unchanged: change.unchanged }).toEqual({
          added: 1, // b
          removed: 1, // c
          changed: 1, // NULL: 5 → 2
          unchanged: 1, // a
        });
        expect(change.sample.find((s) => s.kind === 'changed')).toMatchObject({
          key: ['2026-05-01', null],
          before: ['2026-05-01', null, '5'],
          after: ['2026-05-01', null, '2'],
        });
      } finally {
        await t.close();
      }
    }
  });
});

describe('checksum bisection reads only the ranges that differ', () => {
  const BIG = `(day date NOT NULL, id int NOT NULL, customer text, amount numeric(12,2), note json, PRIMARY KEY (day, id))`;
  const QUERY = 'select day, id, customer, amount, note from big_src where day >= :partition_start and day < :partition_end';

  beforeAll(async () => {
    await src.client.query(`CREATE TABLE big_src ${BIG}`);
    await src.client.query(
      `INSERT INTO big_src SELECT date '2026-05-01', g, 'c' || (g % 97), (g % 1000) / 4.0, json_build_object('g', g % 7) FROM generate_series(1, 20000) g`,
    );
    await far.client.query(`CREATE TABLE mart.big ${BIG}`);
    // The target: a copy with 37 amounts changed, 11 notes changed (a json column: compared as text), 5 rows missing, 3 extra.
    const rows = await src.client.query<{ day: string; id: number; customer: string; amount: string; note: string }>(
      `SELECT day::text, id, customer, amount::text, note::text FROM big_src ORDER BY id`,
    );
    const values = rows.rows
      .filter((r) => r.id % 4001 !== 7)
      .map((r) => [
        r.day,
        r.id,
        r.customer,
        r.id % 541 === 3 ? String(Number(r.amount) + 1) : r.amount,
        r.id % 1811 === 5 ? '{"g": -1}' : r.note,
      ]);
    values.push(['2026-05-01', 900001, 'x', '1', '{}'], ['2026-05-01', 900002, 'x', '2', '{}'], ['2026-05-01', 900003, 'x', '3', '{}']);
    for (let i = 0; i < values.length; i += 2000) {
      const chunk = values.slice(i, i + 2000);
      await far.client.query(
        `INSERT INTO mart.big SELECT * FROM unnest($1::date[], $2::int[], $3::text[], $4::numeric[], $5::json[])`,
        [0, 1, 2, 3, 4].map((c) => chunk.map((v) => v[c])),
      );
    }
  });

  it('finds every added, removed and changed key with digests of a small part of 20,000 rows', async () => {
    const job = asPostgresJob(
      jobSchema.parse({
        name: 'cbk-big',
        unit: 'day',
        timezone: 'UTC',
        source: { connection: 'src', query: QUERY },
        target: { connection: 'far', table: 'mart.big', partition_column: 'day', key: ['day', 'id'] },
        write_mode: 'overwrite-partition',
      }),
    );
    const endpoint = (name: string, db: TestDatabase) => ({ name, connection: connection(db), password: db.password });
    const t = new PostgresPartitionTarget({
      job,
      writeMode: 'overwrite-partition',
      source: endpoint('src', src),
      target: endpoint('far', far),
    });
    try {
      // One hex digit first and small leaves: several levels of bisection on a test-sized table.
      const change = await t.changeByKey(partition('2026-05-01'), { sampleLimit: 100, bisection: { firstLen: 1, leafRows: 40 } });
      const ids = Array.from({ length: 20000 }, (_, i) => i + 1);
      const removedIds = [900001, 900002, 900003];
      const addedIds = ids.filter((id) => id % 4001 === 7);
      const amountIds = ids.filter((id) => id % 4001 !== 7 && id % 541 === 3);
      const noteIds = ids.filter((id) => id % 4001 !== 7 && id % 1811 === 5);
      const changedIds = new Set([...amountIds, ...noteIds]);
      expect({ added: change.added, removed: change.removed, changed: change.changed }).toEqual({
        added: addedIds.length,
        removed: removedIds.length,
        changed: changedIds.size,
      });
      expect(change.columnChanges).toEqual({ customer: 0, amount: amountIds.length, note: noteIds.length });
      expect(change.after).toBe(20000);
      expect(change.before).toBe(20000 - addedIds.length + removedIds.length);
      const sampled = (kind: string) =>
        change.sample
          .filter((s) => s.kind === kind)
          .map((s) => Number(s.key[1]))
          .sort((a, b) => a - b);
      expect(sampled('added')).toEqual(addedIds);
      expect(sampled('removed')).toEqual(removedIds);
      expect(sampled('changed')).toEqual([...changedIds].sort((a, b) => a - b));
      // Only digests of differing ranges crossed the network: far fewer than the 40,000 rows of both sides.
      expect(change.digestRows).toBeGreaterThan(0);
      expect(change.digestRows).toBeLessThan(4000);
      expect(change.complete).toBe(true);
    } finally {
      await t.close();
    }
  });
});

describe('against the snapshot, after the run', () => {
  it('the change the run made equals the change the dry run predicted', async () => {
    const day = partition(DAYS[2] as string);
    const t = target({});
    const pool = new ClientPool(connection(src), src.password, 'UTC', 'cbk-snapshot');
    const snapshots = new PostgresSnapshots(
      pool,
      { connection: 'src', table: 'mart.refund_daily', partition_column: 'refund_date', key: [] },
      'run-cbk',
    );
    try {
      await snapshots.prepare(true);
      await snapshots.snapshot(day);
      const predicted = await t.changeByKey(day, { sampleLimit: 50 });
      await t.writePartition(day, {
        runId: 'run-cbk',
        planHash: 'plan-cbk',
        attempt: 1,
        writeMode: 'overwrite-partition',
        signal: new AbortController().signal,
        onValidated: () => undefined,
      });
      const actual = await t.changeSinceSnapshot(day, 'run-cbk', { sampleLimit: 50 });
      expect(actual.method).toBe('against snapshot');
      const counts = (c: KeyChange) => ({
        added: c.added,
        removed: c.removed,
        changed: c.changed,
        unchanged: c.unchanged,
        before: c.before,
        after: c.after,
      });
      expect(counts(actual)).toEqual(counts(predicted));
      expect(actual.columnChanges).toEqual(predicted.columnChanges);
      expect(actual.measures).toEqual(predicted.measures);
      const keys = (c: KeyChange) => c.sample.map((s) => `${s.kind}:${keyOf(s.key)}`).sort();
      expect(keys(actual)).toEqual(keys(predicted));
      // And once written, the recomputation has nothing left to change.
      const again = await t.changeByKey(day);
      expect(again.added + again.removed + again.changed).toBe(0);
      // A partition never snapshotted is refused by name.
      await expect(t.changeSinceSnapshot(partition(DAYS[3] as string), 'run-cbk')).rejects.toThrow(
        /no snapshot of mart.refund_daily partition 2026-05-04/,
      );
    } finally {
      await t.close();
      await snapshots.close();
      await fillMart(src, 'mart.refund_daily', mart);
    }
  });
});

describe('the user-SQL guard', () => {
  it('refuses a source query that would write before anything runs, and a writing function on the server; no session is left open', async () => {
    await src.client.query(`CREATE TABLE spy (n int)`);
    await src.client.query(`CREATE FUNCTION sneak() RETURNS int LANGUAGE sql VOLATILE AS $$ INSERT INTO spy VALUES (1) RETURNING n $$`);
    const cte = target({ sourceQuery: `with gone as (delete from refunds returning *) select * from gone` });
    const fn = target({
      sourceQuery: `select cast(refunded_at as date) as refund_date, 'x' as reason, sneak()::bigint as refunds, 0::numeric as refund_amount
                      from refunds where refunded_at >= :partition_start and refunded_at < :partition_end`,
    });
    try {
      const refused = await cte.changeByKey(partition(DAYS[0] as string)).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(InputError);
      expect(String((refused as Error).message)).toMatch(/source\.query/);
      const written = await fn.changeByKey(partition(DAYS[0] as string)).catch((e: unknown) => e);
      expect(written).toBeInstanceOf(InputError);
      // Refused by name (a VOLATILE function is refused before the run; were it not, the READ ONLY transaction refuses its INSERT).
      expect(String((written as Error).message)).toMatch(/source\.query: .*(sneak|read-only transaction)/);
      expect((await src.client.query('SELECT count(*)::int AS n FROM spy')).rows[0]).toEqual({ n: 0 });
      expect((await src.client.query('SELECT count(*)::int AS n FROM refunds')).rows[0]).toEqual({ n: raw.length });
    } finally {
      await cte.close();
      await fn.close();
    }
    const admin = await adminClient(pgA);
    try {
      const left = await admin.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'backfill-runbook:cbk-%'`,
      );
      expect(left.rows[0]).toEqual({ n: 0 });
    } finally {
      await admin.end();
    }
  });
});
