/**
 * Every pairing in every format, through the built `run-backfill` against s3rver over HTTP and
 * a real PostgreSQL: Postgres → S3, S3 → S3 (a DuckDB query), S3 → Postgres. Each output is
 * judged by an independent oracle: Postgres itself, and a DuckDB of the test's own reading
 * the objects fetched with the plain SDK. Every object written carries the backfill tags.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, runCli, type Workspace } from '../support/workspace.ts';
import { createTestBucket, listKeys, mixedConfig, s3Env, testS3Client } from '../support/s3.ts';
import { seedEvents } from '../support/events.ts';
import { duckOver, manifestOf, tagsOf } from '../support/lake.ts';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
let ws: Workspace;
let s3: S3Client;
let bucket: string;

const HOURS = ['00', '01', '02'];
const range = ['--from', '2026-01-20T00', '--to', '2026-01-20T03'];
const DAY = '2026-01-20';

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'lakefmt');
  await seedEvents(db.client, 'events', { from: DAY, hours: 3, perHour: 150, seed: 5 });
  s3 = testS3Client(inject('s3'));
  bucket = await createTestBucket(s3, 'lakefmt');
  ws = makeWorkspace('lakefmt', { WAREHOUSE_PASSWORD: db.password, ...s3Env(inject('s3')) });
  ws.writeConfig(
    mixedConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }, { lake: { bucket, endpoint: inject('s3').endpoint } }),
  );
});

afterAll(async () => {
  await db?.drop();
  s3?.destroy();
});

/** The oracle from Postgres: per hour, count, amount and an md5 over (event_id, note) in id order. */
async function pgOracle(table = 'events'): Promise<Record<string, { n: number; amount: number; md5: string }>> {
  const r = await db.client.query<{ h: string; n: string; amount: string | null; md5: string }>(
    `select to_char(event_time at time zone 'UTC', 'HH24') as h, count(*)::text as n, sum(amount)::text as amount,
            md5(string_agg(event_id::text || '|' || coalesce(note, ''), ',' order by event_id)) as md5
       from ${table} group by 1 order by 1`,
  );
  return Object.fromEntries(r.rows.map((x) => [x.h, { n: Number(x.n), amount: Number(x.amount ?? 0), md5: x.md5 }]));
}

const DUCK_ORACLE = `select count(*)::int as n, coalesce(sum(cast(amount as decimal(12,2))), 0)::double as amount,
  md5(string_agg(cast(event_id as varchar) || '|' || coalesce(cast(note as varchar), ''), ',' order by cast(event_id as bigint))) as md5 from source`;

/**
 * runCli with the built command's loader diagnostic (electron/engine/vendored.ts): the run must
 * have loaded none of Node's public built-ins, nor its bundled dependencies (the CommonJS
 * lexer), after bin/v8Profile.mjs set its V8 flags, which void Node's own code cache for
 * whatever loads after them. Small internal helpers loaded on first use (rimraf behind a
 * recursive rm) may, and so may undici: pg constructs a Response when it loads (its probe for a
 * Cloudflare runtime), which a Postgres run pays either way, and loading it up front would cost
 * every S3-only run about 50 ms.
 */
async function runTraced(args: string[]): Promise<Awaited<ReturnType<typeof runCli>>> {
  ws.env.BACKFILL_RUNBOOK_TRACE_VENDORED = '1';
  try {
    const r = await runCli(ws, args);
    const builtins = JSON.parse(/^built-ins after the V8 flags: (.*)$/m.exec(r.stderr)?.[1] ?? 'null') as string[] | null;
    expect(builtins, r.stderr).not.toBeNull();
    expect(
      builtins?.filter((m) => (!m.startsWith('internal/') || m.startsWith('internal/deps/')) && m !== 'internal/deps/undici/undici'),
      r.stderr,
    ).toEqual([]);
    return r;
  } finally {
    delete ws.env.BACKFILL_RUNBOOK_TRACE_VENDORED;
  }
}

function exportJob(name: string, path: string, target: string): string {
  return `name: ${name}
unit: hour
source:
  connection: warehouse
  query: |
    select event_id, user_id, event_type, event_time, amount, note, props from events
    where event_time >= :partition_start and event_time < :partition_end
target:
  kind: s3
  connection: lake
  path: ${JSON.stringify(path)}
${target}write_mode: overwrite-partition
validation:
  - name: events exported
    source: select count(*) as records, sum(amount) as amount from events where event_time >= :partition_start and event_time < :partition_end
    target: select count(*) as records, sum(cast(amount as decimal(12,2))) as amount from target
`;
}

const FORMATS: { name: string; target: string; ending: RegExp }[] = [
  { name: 'parquet-zstd', target: '  format: parquet\n', ending: /\.parquet$/ },
  { name: 'parquet-snappy', target: '  format: parquet\n  parquet: { codec: snappy, row_group_size: 2048 }\n', ending: /\.parquet$/ },
  { name: 'csv-gzip', target: '  format: csv\n', ending: /\.csv\.gz$/ },
  { name: 'csv-zstd-semicolon', target: '  format: csv\n  compression: zstd\n  csv: { delimiter: ";" }\n', ending: /\.csv\.zst$/ },
  { name: 'jsonl-zstd', target: '  format: jsonl\n  compression: zstd\n', ending: /\.json\.zst$/ },
  { name: 'jsonl-none', target: '  compression: none\n', ending: /\.json$/ },
];

describe('Postgres → S3 in every format', () => {
  it.each(FORMATS)(
    '$name: every hour equals Postgres, read back by an independent DuckDB, every object tagged',
    async ({ name, target, ending }) => {
      const path = `exp-backfill/${name}/dt={date}/hour={hour}/`;
      ws.writeJob(`x-${name}`, exportJob(`x-${name}`, path, target));
      const r = await runCli(ws, [`x-${name}`, ...range, '--run-id', `run-${name}`]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const oracle = await pgOracle();
      for (const h of HOURS) {
        const stem = `exp-backfill/${name}/dt=${DAY}/hour=${h}/`;
        const manifest = await manifestOf(s3, bucket, stem);
        expect(manifest?.run_id).toBe(`run-${name}`);
        const keys = manifest?.objects.map((o) => o.key) ?? [];
        expect(
          keys.every((k) => ending.test(k)),
          keys.join(),
        ).toBe(true);
        const reader = name.startsWith('csv-zstd')
          ? (files: string) => `read_csv(${files}, header = true, all_varchar = true, delim = ';')`
          : undefined;
        const [got] = await duckOver<{ n: number; amount: number; md5: string }>(s3, bucket, keys, DUCK_ORACLE, reader);
        expect(got).toEqual(oracle[h]);
        // nothing under the stem but the manifest and what it lists
        expect(await listKeys(s3, bucket, stem)).toEqual([...keys, `${stem}_complete`].sort());
        for (const key of [...keys, `${stem}_complete`]) {
          expect(await tagsOf(s3, bucket, key)).toEqual({ source: 'backfill', run_id: `run-${name}`, plan_hash: manifest?.plan_hash });
        }
      }
    },
  );

  it('an idempotent rerun leaves each partition as one run does: same records, no object twice', async () => {
    const name = 'parquet-zstd';
    const before = await listKeys(s3, bucket, `exp-backfill/${name}/`);
    const r = await runTraced([`x-${name}`, ...range, '--run-id', `rerun-${name}`]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const after = await listKeys(s3, bucket, `exp-backfill/${name}/`);
    expect(after.length).toBe(before.length);
    for (const h of HOURS) {
      const stem = `exp-backfill/${name}/dt=${DAY}/hour=${h}/`;
      const manifest = await manifestOf(s3, bucket, stem);
      expect(manifest?.run_id).toBe(`rerun-${name}`);
      const [got] = await duckOver<{ n: number }>(s3, bucket, manifest?.objects.map((o) => o.key) ?? [], DUCK_ORACLE);
      expect(got).toEqual((await pgOracle())[h]);
      for (const o of manifest?.objects ?? []) expect((await tagsOf(s3, bucket, o.key)).run_id).toBe(`rerun-${name}`);
    }
  });

  it('splits a partition into objects of records_per_object rows, in order', async () => {
    ws.writeJob(
      'x-split',
      exportJob('x-split', 'exp-backfill/split/dt={date}/hour={hour}/', '  format: parquet\n  records_per_object: 40\n'),
    );
    const r = await runCli(ws, ['x-split', ...range, '--run-id', 'run-split']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const manifest = await manifestOf(s3, bucket, `exp-backfill/split/dt=${DAY}/hour=00/`);
    const oracle = (await pgOracle())['00'];
    expect(manifest?.objects.map((o) => o.records)).toEqual([40, 40, 40, (oracle?.n ?? 0) - 120].filter((n) => n > 0));
    const [got] = await duckOver(s3, bucket, manifest?.objects.map((o) => o.key) ?? [], DUCK_ORACLE);
    expect(got).toEqual(oracle);
  });
});

function refineJob(name: string, from: string, to: string, source: string, target: string, query: string): string {
  return `name: ${name}
unit: hour
source:
  kind: s3
  connection: lake
  path: ${JSON.stringify(from)}
${source}  query: |
${query
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
target:
  kind: s3
  connection: lake
  path: ${JSON.stringify(to)}
${target}write_mode: overwrite-partition
validation:
  - name: one row per event
    source: select count(distinct event_id) as records from source
    target: records
`;
}

const REFINE_QUERY = `select cast(event_id as bigint) as event_id, upper(event_type) as event_type,
       cast(event_time as timestamptz) as event_time, cast(amount as decimal(12,2)) as amount,
       cast(event_time as timestamptz) >= :partition_start and cast(event_time as timestamptz) < :partition_end as in_partition,
       :run_id as refined_by
  from source
 qualify row_number() over (partition by event_id order by event_time) = 1`;

describe('S3 → S3 with a DuckDB query', () => {
  it.each([
    { from: 'parquet-zstd', source: '  format: parquet\n', target: '  format: parquet\n' },
    { from: 'csv-gzip', source: '  format: csv\n', target: '  format: jsonl\n  compression: zstd\n' },
    { from: 'jsonl-none', source: '', target: '  format: csv\n  compression: gzip\n' },
  ])('$from → refined: parsed, derived, one row per event, bound parameters', async ({ from, source, target }) => {
    const name = `r-${from}`;
    ws.writeJob(
      name,
      refineJob(
        name,
        `exp-backfill/${from}/dt={date}/hour={hour}/`,
        `refined/${from}/dt={date}/hour={hour}/`,
        source,
        target,
        REFINE_QUERY,
      ),
    );
    const r = await runCli(ws, [name, ...range, '--run-id', `run-${name}`]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const oracle = await pgOracle();
    for (const h of HOURS) {
      const manifest = await manifestOf(s3, bucket, `refined/${from}/dt=${DAY}/hour=${h}/`);
      const keys = manifest?.objects.map((o) => o.key) ?? [];
      const rows = await duckOver<{ n: number; types: number; inside: number; by: string }>(
        s3,
        bucket,
        keys,
        `select count(*)::int as n, count(distinct event_type)::int as types, count(*) filter (where cast(in_partition as boolean))::int as inside, min(refined_by) as by from source`,
      );
      expect(rows[0]).toEqual({ n: oracle[h]?.n, types: 4, inside: oracle[h]?.n, by: `run-${name}` });
      const [upper] = await duckOver<{ lower: number }>(
        s3,
        bucket,
        keys,
        `select count(*) filter (where event_type <> upper(event_type))::int as lower from source`,
      );
      expect(upper?.lower).toBe(0);
    }
  });

  it('drops duplicates by event id: a doubled source hour refines to each event once', async () => {
    const stem = `exp-backfill/parquet-zstd/dt=${DAY}/hour=00/`;
    const manifest = await manifestOf(s3, bucket, stem);
    const key = manifest?.objects[0]?.key ?? '';
    // the same object twice in a partition read by listing (no manifest of ours): every event doubled
    const { CopyObjectCommand } = await import('@aws-sdk/client-s3');
    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: `dup/dt=${DAY}/hour=00/a.parquet`, CopySource: `${bucket}/${key}` }));
    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: `dup/dt=${DAY}/hour=00/b.parquet`, CopySource: `${bucket}/${key}` }));
    ws.writeJob(
      'r-dup',
      refineJob(
        'r-dup',
        'dup/dt={date}/hour={hour}/',
        'refined/dup/dt={date}/hour={hour}/',
        '  format: parquet\n  require_complete: false\n',
        '  format: parquet\n',
        REFINE_QUERY,
      ),
    );
    const r = await runCli(ws, ['r-dup', '--from', '2026-01-20T00', '--to', '2026-01-20T01', '--run-id', 'run-dup']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const out = await manifestOf(s3, bucket, `refined/dup/dt=${DAY}/hour=00/`);
    expect(out?.records).toBe((await pgOracle())['00']?.n);
  });

  it('the built command takes its packages from dist/node/vendor, each compiled from its code cache', async () => {
    // the rerun of the job above, with the loader's diagnostic lines (electron/engine/vendored.ts)
    const r = await runTraced(['r-dup', '--from', '2026-01-20T00', '--to', '2026-01-20T01', '--run-id', 'run-dup-vendored']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const line = /^vendored: (.*)$/m.exec(r.stderr)?.[1];
    expect(JSON.parse(line ?? 'null'), r.stderr).toEqual({
      commander: 'bundle+cache',
      zod: 'bundle+cache',
      yaml: 'bundle+cache',
      '@aws-sdk/client-s3': 'bundle+cache',
      '@duckdb/node-api': 'bundle+cache',
    });
  });
});

describe('S3 → Postgres from every format', () => {
  it.each(['parquet-snappy', 'csv-zstd-semicolon', 'jsonl-zstd'])('%s: the loaded table equals the exported one', async (from) => {
    const table = `loaded_${from.replaceAll('-', '_')}`;
    await db.client.query(`create table ${table} (like events including all)`);
    const source = from.startsWith('parquet')
      ? '  format: parquet\n'
      : from.startsWith('csv')
        ? '  format: csv\n  csv: { delimiter: ";" }\n'
        : '  format: jsonl\n';
    ws.writeJob(
      `l-${from}`,
      `name: l-${from}
unit: hour
source:
  kind: s3
  connection: lake
  path: "exp-backfill/${from}/dt={date}/hour={hour}/"
${source}target:
  connection: warehouse
  table: ${table}
  partition_column: event_time
  key: [event_id]
write_mode: overwrite-partition
validation:
  - name: records loaded
    source: select count(*) as records from source
    target: select count(*) as records from ${table} where event_time >= :partition_start and event_time < :partition_end
`,
    );
    const r = await runCli(ws, [`l-${from}`, ...range, '--run-id', `run-l-${from}`]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const md5 = async (t: string) =>
      (await db.client.query<{ m: string }>(`select md5(string_agg(t::text, E'\\n' order by t.event_id)) as m from ${t} t`)).rows[0]?.m;
    expect(await md5(table)).toBe(await md5('events'));
    // again: idempotent, nothing doubled
    const again = await runTraced([`l-${from}`, ...range, '--run-id', `run-l2-${from}`]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(await md5(table)).toBe(await md5('events'));
  });
});
