/**
 * (l) The change by key over the bench's rows and partitions ÷ the same partitions' plain
 * `count(*)` and `sum(amount)` scan on both sides (what the dry run measured before it showed
 * the change by key)                                           — aim ≤ 2
 *
 * The target is the source with about 1% of amounts changed, 0.1% of rows missing and a few
 * extra, so every partition has changes to find and to sample. Printed beside it: the same
 * measurement across two servers (checksum bisection) over the same baseline, from the first
 * rounds.
 */
import pg from 'pg';
import type { PgServerInfo } from '../electron/engine/sandbox/embeddedPostgres.ts';
import { partitionRange, type Partition } from '../shared/partitions.ts';
import { PostgresPartitionTarget } from '../electron/engine/targets/postgres/partitionTarget.ts';
import { benchJob, pgConnection } from './executor.ts';
import { describePairs, measurePairs, median } from './pairs.ts';

type Line = (name: string, value: string, target: string, pass: boolean, detail: string, skipped?: boolean) => void;

const TABLE = 'mart.events_changed';
const DDL = `(day date NOT NULL, id bigint NOT NULL, customer_id int NOT NULL, amount numeric(12,2) NOT NULL, note text, PRIMARY KEY (day, id))`;

async function connect(server: PgServerInfo): Promise<pg.Client> {
  const c = new pg.Client({ host: server.host, port: server.port, user: server.user, password: server.password, database: 'bench' });
  await c.connect();
  return c;
}

/** The changed copy of src_events, on `server` (from `source`'s rows when they are elsewhere). */
async function seedChanged(source: PgServerInfo, server: PgServerInfo): Promise<void> {
  const c = await connect(server);
  await c.query(`DROP TABLE IF EXISTS ${TABLE}; CREATE TABLE ${TABLE} ${DDL}`);
  if (source.port === server.port) {
    await c.query(`INSERT INTO ${TABLE} SELECT day, id, customer_id, CASE WHEN id % 97 = 0 THEN amount + 1 ELSE amount END, note
                     FROM src_events WHERE id % 1009 <> 0`);
  } else {
    const s = await connect(source);
    const { rows } = await s.query<{ n: string }>('SELECT max(id)::text AS n FROM src_events');
    await s.end();
    // The generator of src_events, repeated here: the same rows without shipping them.
    const days = 30;
    const n = Number(rows[0]?.n ?? 0);
    await c.query(
      `INSERT INTO ${TABLE}
       SELECT date '2026-01-01' + (g % ${days}), g, (g::bigint * 7919) % 50000,
              ((g::bigint * 104729) % 100000) / 100.0 + CASE WHEN g % 97 = 0 THEN 1 ELSE 0 END, 'order ' || g
         FROM generate_series(1, ${n}) AS g WHERE g % 1009 <> 0`,
    );
  }
  await c.query(`INSERT INTO ${TABLE} SELECT day, id + 10000000, customer_id, amount, note FROM ${TABLE} WHERE id % 4999 = 0`);
  await c.query(`VACUUM ANALYZE ${TABLE}`);
  await c.end();
}

/** The baseline: count(*) and sum(amount) of each partition, source then target, over one connection. */
async function plainScans(source: PgServerInfo, target: PgServerInfo, partitions: readonly Partition[]): Promise<number> {
  const s = await connect(source);
  const t = target.port === source.port ? s : await connect(target);
  const started = performance.now();
  for (const p of partitions) {
    await s.query('SELECT count(*), sum(amount) FROM src_events WHERE day >= $1 AND day < $2', [p.start, p.end]);
    await t.query(`SELECT count(*), sum(amount) FROM ${TABLE} WHERE day >= $1 AND day < $2`, [p.start, p.end]);
  }
  const ms = performance.now() - started;
  await s.end();
  if (t !== s) await t.end();
  return ms;
}

function target(source: PgServerInfo, server: PgServerInfo, sourceQuery: string): PostgresPartitionTarget {
  const same = source.port === server.port;
  const job = benchJob({ name: 'bench-change-by-key', sourceQuery, table: TABLE, partitionColumn: 'day', key: ['day', 'id'] });
  return new PostgresPartitionTarget({
    job,
    writeMode: 'overwrite-partition',
    source: { name: same ? 'dst' : 'src', connection: pgConnection(source, 'bench'), password: source.password },
    target: { name: 'dst', connection: pgConnection(server, 'bench'), password: server.password },
  });
}

/** Every partition's change by key, one after another, on a target prepared beforehand; also the keys found. */
async function changeByKey(t: PostgresPartitionTarget, partitions: readonly Partition[]): Promise<{ ms: number; keys: number }> {
  const started = performance.now();
  let keys = 0;
  for (const p of partitions) {
    const c = await t.changeByKey(p);
    keys += c.added + c.removed + c.changed;
  }
  return { ms: performance.now() - started, keys };
}

export async function runChangeByKeyBench(
  a: PgServerInfo,
  b: PgServerInfo,
  line: Line,
  opts: { sourceQuery: string; from: string; to: string; minPairs: number; maxPairs: number; rounds: number },
): Promise<void> {
  await seedChanged(a, a);
  await seedChanged(a, b);
  const partitions = partitionRange({ from: opts.from, to: opts.to }, 'day', 'UTC');
  const here = target(a, a, opts.sourceQuery);
  const across = target(a, b, opts.sourceQuery);
  try {
    const warm = await changeByKey(here, partitions); // prepares the target, warms both caches
    await plainScans(a, a, partitions);
    const acrossMs: number[] = [];
    const acrossBase: number[] = [];
    let acrossKeys = 0;
    const result = await measurePairs({
      subject: async () => (await changeByKey(here, partitions)).ms,
      baseline: () => plainScans(a, a, partitions),
      minPairs: opts.minPairs,
      maxPairs: opts.maxPairs,
      onPair: async (i) => {
        if (i >= opts.rounds) return;
        const r = await changeByKey(across, partitions);
        acrossMs.push(r.ms);
        acrossKeys = r.keys;
        acrossBase.push(await plainScans(a, b, partitions));
      },
    });
    line(
      '(l) change by key ÷ count(*)+sum scans',
      result.median.toFixed(3),
      '≤ 2',
      result.median <= 2,
      `${describePairs(result)}; ${partitions.length} partitions, ${warm.keys.toLocaleString('en-US')} keys changed; medians: change by key ${median(result.subjectMs).toFixed(0)} ms, scans of both sides ${median(result.baselineMs).toFixed(0)} ms`,
    );
    console.log(
      `    across two servers (checksum bisection): ${(median(acrossMs) / median(acrossBase)).toFixed(3)} × the same scans (medians ${median(acrossMs).toFixed(0)} ms ÷ ${median(acrossBase).toFixed(0)} ms over ${acrossMs.length} rounds; ${acrossKeys.toLocaleString('en-US')} keys changed)`,
    );
  } finally {
    await here.close();
    await across.close();
  }
}
