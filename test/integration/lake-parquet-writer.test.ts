/**
 * Postgres → Parquet without DuckDB (pgParquet.ts), through the built run-backfill against a
 * real PostgreSQL and s3rver. Its oracle is the DuckDB path (the same rows as JSON Lines, read
 * and written by DuckDB), which a snappy target still takes: same Parquet schema, same rows in
 * the same order, value for value, edge values included; and Postgres for counts and sums.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, runCli, type Workspace } from '../support/workspace.ts';
import { createTestBucket, mixedConfig, s3Env, testS3Client } from '../support/s3.ts';
import { duckOver, manifestOf } from '../support/lake.ts';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
let ws: Workspace;
let s3: S3Client;
let bucket: string;

const DAYS = ['2026-03-01', '2026-03-02'];
const range = ['--from', DAYS[0] as string, '--to', '2026-03-03'];

const COLUMNS = `id int not null, day date not null, s smallint, i integer, b bigint, r real, d double precision,
  f boolean, dt date, ts timestamp, tz timestamptz, u uuid, n41 numeric(4,1), n92 numeric(9,2), n184 numeric(18,4),
  t text, v varchar(10), c char(5), "Odd ""name""" text, q int, dm amount_t, nm name`;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'pqwriter');
  // a domain (typed by its base type on both paths) and the catalog's own name type
  await db.client.query(`create domain amount_t as numeric(9,2) check (value > -1000000)`);
  await db.client.query(`create table typed (${COLUMNS})`);
  // 2,400 generated rows a day, every column NULL now and then
  await db.client.query(`
    insert into typed
    select g, date '2026-03-01' + (g % 2),
      case when g % 11 = 0 then null else (g % 65535 - 32767)::smallint end,
      case when g % 13 = 0 then null else g * 7919 - 1000000 end,
      case when g % 17 = 0 then null else g::bigint * 1000000007 * (case when g % 2 = 0 then 1 else -1 end) end,
      case when g % 19 = 0 then null else (g / 7.0)::real end,
      case when g % 23 = 0 then null else g / 3.0 end,
      case when g % 5 = 0 then null else g % 3 = 0 end,
      case when g % 29 = 0 then null else date '1970-01-01' + (g * 37 - 40000) end,
      case when g % 31 = 0 then null else timestamp '2000-01-01' + (g * interval '1 hour 17 minutes 3.000123 seconds') - interval '40 years' end,
      case when g % 37 = 0 then null else timestamptz '2026-03-01 12:00+09' + g * interval '61 seconds' end,
      case when g % 41 = 0 then null else md5(g::text)::uuid end,
      case when g % 43 = 0 then null else ((g % 19999) - 9999) / 10.0 end,
      case when g % 47 = 0 then null else (g * 12345 % 1999999999 - 999999999) / 100.0 end,
      case when g % 53 = 0 then null else (g::numeric * 12345678901 % 999999999999999999 - 499999999999999999) / 10000 end,
      case when g % 3 = 0 then null when g % 7 = 0 then '' else repeat(chr(945 + g % 20), g % 60) || ' row ' || g || E'\\t"q"\\\\' end,
      case when g % 9 = 0 then null else left('v' || g, 10) end,
      case when g % 10 = 0 then null else left(g::text, 3) end,
      'odd ' || g, g % 4,
      case when g % 59 = 0 then null else (g % 99999) / 100.0 end,
      case when g % 61 = 0 then null else 'rel_' || g end
    from generate_series(1, 4800) as g`);
  // the edges: extremes, ±infinity, NaN, -0, a value larger than a page, text that needs care
  await db.client.query(`
    insert into typed values
      (900001, '2026-03-01', -32768, -2147483648, -9223372036854775808, 'NaN', 'Infinity', true, 'infinity', 'infinity', '-infinity',
       '00000000-0000-0000-0000-000000000000', -999.9, -9999999.99, -99999999999999.9999, repeat('x', 2500000), '', 'ab', null, 1, -999999.99, repeat('n', 63)),
      (900002, '2026-03-01', 32767, 2147483647, 9223372036854775807, '-Infinity', '-0', false, '-infinity', '-infinity', 'infinity',
       'ffffffff-ffff-ffff-ffff-ffffffffffff', 999.9, 9999999.99, 99999999999999.9999, E'line\\nbreak\\r\\u0001 ✓ 😀', 'ünï', 'ü', '', 2, 9999999.99, ''),
      (900003, '2026-03-02', 0, 0, 0, 1.4e-45, 5e-324, null, '0001-01-01', '0001-01-01 00:00:00.000001', '1969-12-31 23:59:59.999999+00',
       null, 0, 0, 0, null, null, null, null, null, 0, null),
      (900004, '2026-03-02', null, null, null, null, null, null, '9999-12-31', '9999-12-31 23:59:59.999999', '2000-01-01 00:00:00+00',
       null, null, null, null, 'fin', null, '     ', 'x', 3, null, 'ü')`);
  s3 = testS3Client(inject('s3'));
  bucket = await createTestBucket(s3, 'pqwriter');
  ws = makeWorkspace('pqwriter', { WAREHOUSE_PASSWORD: db.password, ...s3Env(inject('s3')) });
  ws.writeConfig(
    mixedConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }, { lake: { bucket, endpoint: inject('s3').endpoint } }),
  );
});

afterAll(async () => {
  await db?.drop();
  s3?.destroy();
});

function job(name: string, target: string, query?: string): string {
  return `name: ${name}
unit: day
source:
  connection: warehouse
  query: ${query ?? 'select * from typed'} where day >= :partition_start and day < :partition_end
target:
  kind: s3
  connection: lake
  path: "pq/${name}/dt={date}/"
  format: parquet
${target}write_mode: overwrite-partition
validation:
  - name: rows and sums, read back by the product's DuckDB
    source: select count(*) as records${query ? '' : ', sum(n184) as n184, sum(i) as i'} from typed where day >= :partition_start and day < :partition_end
    target: select count(*) as records${query ? '' : ', sum(n184) as n184, sum(i) as i'} from target
`;
}

async function run(name: string, target: string, runId: string, query?: string): Promise<void> {
  ws.writeJob(name, job(name, target, query));
  const r = await runCli(ws, [name, ...range, '--run-id', runId]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
}

async function keysOf(name: string, day: string): Promise<string[]> {
  return (await manifestOf(s3, bucket, `pq/${name}/dt=${day}/`))?.objects.map((o) => o.key) ?? [];
}

const SCHEMA_SQL = `select distinct name, type, type_length, repetition_type, num_children, converted_type, scale, precision, logical_type
  from source order by all`;
const schemaOf = (files: string): string => `parquet_schema(${files})`;
const metadataOf = (files: string): string => `parquet_file_metadata(${files})`;

/** The first row where `a` and `b` differ (by JSON text: NaN, -0 and big numbers as DuckDB renders them), or undefined. */
function firstDifference(a: Record<string, unknown>[], b: Record<string, unknown>[]): unknown {
  if (a.length !== b.length) return { rows: [a.length, b.length] };
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [JSON.stringify(a[i]), JSON.stringify(b[i])];
    if (x !== y) return { row: i, got: a[i], want: b[i] };
  }
  return undefined;
}

/** Every row in file order, each value as DuckDB renders it (NaN and ±infinity included). */
const ROWS_SQL = `select * exclude (filename) from source order by filename, file_row_number`;

const reader = (files: string): string => `read_parquet(${files}, filename = true, file_row_number = true)`;

describe('Postgres → Parquet written by run-backfill itself', () => {
  beforeAll(async () => {
    await run('duck', '  parquet: { codec: snappy, row_group_size: 1024 }\n', 'run-duck');
    await run('direct', '  records_per_object: 1500\n  parquet: { row_group_size: 1024 }\n', 'run-direct');
  });

  it('takes the direct path for these types, and DuckDB for snappy', async () => {
    for (const [name, maker] of [
      ['direct', /^backfill-runbook/],
      ['duck', /^DuckDB/],
    ] as const) {
      const keys = await keysOf(name, DAYS[0] as string);
      const got = await duckOver<{ created_by: string }>(s3, bucket, keys, `select created_by from source`, metadataOf);
      expect(got.length).toBeGreaterThan(0);
      for (const g of got) expect(g.created_by).toMatch(maker);
    }
  });

  it.each(DAYS)('%s: the same schema, rows, order and values as the DuckDB path', async (day) => {
    const direct = await keysOf('direct', day);
    const duck = await keysOf('duck', day);
    // records_per_object 1500 cut the direct partition into objects; DuckDB's is one
    expect(direct.length).toBeGreaterThan(1);
    const schemaDirect = await duckOver(s3, bucket, direct, SCHEMA_SQL, schemaOf);
    expect(schemaDirect.length).toBe(23);
    expect(schemaDirect).toEqual(await duckOver(s3, bucket, duck, SCHEMA_SQL, schemaOf));
    const rowsDirect = await duckOver<Record<string, unknown>>(s3, bucket, direct, ROWS_SQL, reader);
    const rowsDuck = await duckOver<Record<string, unknown>>(s3, bucket, duck, ROWS_SQL, reader);
    const strip = (rows: Record<string, unknown>[]): Record<string, unknown>[] => rows.map(({ file_row_number: _n, ...rest }) => rest);
    const pgCount = await db.client.query<{ n: string }>(`select count(*)::text as n from typed where day = $1`, [day]);
    expect(rowsDirect.length).toBe(Number(pgCount.rows[0]?.n));
    expect(firstDifference(strip(rowsDirect), strip(rowsDuck))).toBeUndefined();
  });

  it('reads back the edges as Postgres has them', async () => {
    const keys = await keysOf('direct', DAYS[0] as string);
    const rows = await duckOver<Record<string, unknown>>(
      s3,
      bucket,
      keys,
      `select id, s, i, b::varchar as b, r::varchar as r, d::varchar as d, f, dt::varchar as dt, ts::varchar as ts, u::varchar as u,
              n41::varchar as n41, n92::varchar as n92, n184::varchar as n184, length(t)::int as t, v, c, "Odd ""name"""
         from source where id > 900000 order by id`,
      reader,
    );
    expect(rows).toEqual([
      {
        id: 900001,
        s: -32768,
        i: -2147483648,
        b: '-9223372036854775808',
        r: 'nan',
        d: 'inf',
        f: true,
        dt: 'infinity',
        ts: 'infinity',
        u: '00000000-0000-0000-0000-000000000000',
        n41: '-999.9',
        n92: '-9999999.99',
        n184: '-99999999999999.9999',
        t: 2_500_000,
        v: '',
        c: 'ab   ',
        'Odd "name"': null,
      },
      {
        id: 900002,
        s: 32767,
        i: 2147483647,
        b: '9223372036854775807',
        r: '-inf',
        d: '-0.0',
        f: false,
        dt: '-infinity',
        ts: '-infinity',
        u: 'ffffffff-ffff-ffff-ffff-ffffffffffff',
        n41: '999.9',
        n92: '9999999.99',
        n184: '99999999999999.9999',
        t: 16,
        v: 'ünï',
        c: 'ü    ',
        'Odd "name"': '',
      },
    ]);
  });

  it('a rerun writes byte-identical objects under the same keys', async () => {
    const before = await keysOf('direct', DAYS[1] as string);
    await run('direct', '  records_per_object: 1500\n  parquet: { row_group_size: 1024 }\n', 'rerun-direct');
    expect((await manifestOf(s3, bucket, `pq/direct/dt=${DAYS[1]}/`))?.run_id).toBe('rerun-direct');
    expect(await keysOf('direct', DAYS[1] as string)).toEqual(before);
  });

  it.each([
    ['gzip', '  parquet: { codec: gzip }\n'],
    ['uncompressed', '  parquet: { codec: uncompressed, row_group_size: 5000 }\n'],
  ])('codec %s: the same rows as the DuckDB path', async (codec, target) => {
    await run(`direct-${codec}`, target, `run-${codec}`);
    for (const day of DAYS) {
      const got = await duckOver<Record<string, unknown>>(s3, bucket, await keysOf(`direct-${codec}`, day), ROWS_SQL, reader);
      const want = await duckOver<Record<string, unknown>>(s3, bucket, await keysOf('duck', day), ROWS_SQL, reader);
      expect(
        firstDifference(
          got.map(({ file_row_number: _n, ...r }) => r),
          want.map(({ file_row_number: _n, ...r }) => r),
        ),
      ).toBeUndefined();
    }
  });

  it('NaN in a numeric(p,s) fails the partition naming the decimal columns; nothing published', async () => {
    await db.client.query(`create table with_nan as select day, n41, n92 from typed where id > 900000`);
    await db.client.query(`insert into with_nan values ('2026-03-01', 'NaN', 1)`);
    const name = 'nan';
    ws.writeJob(name, job(name, '', 'select day, n41, n92 from with_nan').replaceAll('from typed', 'from with_nan'));
    const r = await runCli(ws, [name, ...range, '--run-id', 'run-nan']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout + r.stderr).toMatch(
      /a numeric column holds NaN or infinity, which a Parquet DECIMAL cannot hold \("n41" numeric\(4,1\), "n92" numeric\(9,2\)\)/,
    );
    expect(await manifestOf(s3, bucket, `pq/${name}/dt=${DAYS[0]}/`)).toBeNull();
  });

  it('a column no direct type covers (json) takes the DuckDB path', async () => {
    await run('with-json', '', 'run-json', 'select id, day, to_json(t) as j from typed');
    const keys = await keysOf('with-json', DAYS[0] as string);
    const [meta] = await duckOver<{ created_by: string }>(s3, bucket, keys, `select created_by from source`, metadataOf);
    expect(meta?.created_by).toMatch(/^DuckDB/);
  });
});

describe('numerics through DuckDB keep every digit', () => {
  // DuckDB's JSON reader takes every JSON number through a double: 18 digits came back rounded
  const query =
    'select id, day, n184, n184 * 1000000 as wide, 12345678901234567890.123 + id as big, array[n41, 2.5]::numeric[] as arr from typed';

  it.each([
    ['csv', '  format: csv\n', (files: string) => `read_csv(${files}, header = true, all_varchar = true)`],
    ['parquet', '  format: parquet\n', (files: string) => `(select n184::varchar as n184, wide, big, id from read_parquet(${files}))`],
  ])('%s: numeric(18,4) and numeric without a typmod, digit for digit', async (format, target, read) => {
    const name = `exact-${format}`;
    ws.writeJob(name, job(name, target, query).replace('  format: parquet\n', ''));
    const r = await runCli(ws, [name, ...range, '--run-id', `run-${name}`]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const want = await db.client.query<{ id: string; n184: string | null; wide: string | null; big: string }>(
      `select id::text, n184::text, (n184 * 1000000)::text as wide, (12345678901234567890.123 + id)::text as big from typed where day = $1 order by typed.id`,
      [DAYS[0]],
    );
    expect(want.rows.some((w) => (w.n184 ?? '').replace(/[-.]/g, '').length >= 18)).toBe(true);
    const got = await duckOver<{ id: string; n184: string | null; wide: string | null; big: string }>(
      s3,
      bucket,
      await keysOf(name, DAYS[0] as string),
      'select id::varchar as id, n184, wide, big from source order by id::bigint',
      read,
    );
    expect(firstDifference(got, want.rows)).toBeUndefined();
    // an array of numerics stays a JSON array of numbers (not its Postgres text, {…})
    const [arrays] = await duckOver<{ n: number; arrays: number }>(
      s3,
      bucket,
      await keysOf(name, DAYS[0] as string),
      `select count(*)::int as n, count(*) filter (where arr::varchar like '[%,2.5]')::int as arrays from source`,
      format === 'csv' ? (files: string) => `read_csv(${files}, header = true, all_varchar = true)` : undefined,
    );
    expect(arrays?.arrays).toBe(arrays?.n);
  });
});
