/**
 * Bad input and hostile SQL on the lake's paths, through the built `run-backfill` against
 * s3rver over HTTP: each a clear error naming the object or the field, exit 2, and nothing
 * published (no manifest, no data object left behind). Then a SIGKILL in the middle of a
 * partition and a resume: no orphan object visible to a reader, nothing doubled.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, runCli, startCli, type Workspace } from '../support/workspace.ts';
import { createTestBucket, listKeys, mixedConfig, putObject, s3Env, testS3Client } from '../support/s3.ts';
import { seedEvents } from '../support/events.ts';
import { duckOver, manifestOf } from '../support/lake.ts';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
let ws: Workspace;
let s3: S3Client;
let bucket: string;
const DAY = '2026-01-20';
const one = ['--from', '2026-01-20T00', '--to', '2026-01-20T01'];

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'lakebad');
  await seedEvents(db.client, 'events', { from: DAY, hours: 1, perHour: 50, seed: 3 });
  s3 = testS3Client(inject('s3'));
  bucket = await createTestBucket(s3, 'lakebad');
  ws = makeWorkspace('lakebad', { WAREHOUSE_PASSWORD: db.password, ...s3Env(inject('s3')) });
  ws.writeConfig(
    mixedConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }, { lake: { bucket, endpoint: inject('s3').endpoint } }),
  );
  await putObject(s3, bucket, `in/csv/dt=${DAY}/hour=00/a.csv`, 'event_id,event_type\n1,click\n2,view\n');
  await putObject(s3, bucket, `in/ragged/dt=${DAY}/hour=00/a.csv`, 'event_id,event_type\n1,click\n2,view,extra\n3,buy\n');
  await putObject(s3, bucket, `in/semicolon/dt=${DAY}/hour=00/a.csv`, 'event_id;event_type\n1;click\n2;view\n');
  await putObject(s3, bucket, `in/corrupt/dt=${DAY}/hour=00/a.parquet`, Buffer.from('PAR1 this is not a parquet file at all PAR1'));
});

afterAll(async () => {
  await db?.drop();
  s3?.destroy();
});

function job(name: string, from: string, source: string, query?: string): string {
  return `name: ${name}
unit: hour
source:
  kind: s3
  connection: lake
  path: "${from}/dt={date}/hour={hour}/"
  require_complete: false
${source}${query === undefined ? '' : `  query: ${JSON.stringify(query)}\n`}target:
  kind: s3
  connection: lake
  path: "out/${name}/dt={date}/hour={hour}/"
  format: parquet
write_mode: overwrite-partition
`;
}

async function expectRefused(name: string, jobText: string, says: RegExp): Promise<void> {
  ws.writeJob(name, jobText);
  const r = await runCli(ws, [name, ...one, '--run-id', `run-${name}`]);
  expect(r.code, r.stdout + r.stderr).toBe(2);
  expect(r.stdout + r.stderr).toMatch(says);
  expect(r.stdout + r.stderr).not.toMatch(/\n\s+at .*\.(ts|mjs|js):\d+/); // no stack trace
  expect(await listKeys(s3, bucket, `out/${name}/`)).toEqual([]);
}

describe('bad input: a clear error naming the object or field, exit 2, nothing published', () => {
  it('a corrupt Parquet object', async () => {
    await expectRefused(
      'bad-parquet',
      job('bad-parquet', 'in/corrupt', '  format: parquet\n'),
      new RegExp(`s3://${bucket}/in/corrupt/dt=${DAY}/hour=00/a\\.parquet`),
    );
  });

  it('a CSV with a ragged row', async () => {
    await expectRefused(
      'bad-ragged',
      job('bad-ragged', 'in/ragged', '  format: csv\n'),
      new RegExp(`s3://${bucket}/in/ragged/.*a\\.csv|Expected Number of Columns|columns`, 'i'),
    );
  });

  it('a CSV read with the wrong delimiter names source.csv.delimiter and the right one', async () => {
    // of a range, only some partitions may have come in another delimiter: it names which, and its objects
    await expectRefused(
      'bad-delim',
      job('bad-delim', 'in/semicolon', '  format: csv\n'),
      new RegExp(
        `the CSV objects of partition 2026-01-20T00 \\(s3://${bucket}/in/semicolon/dt=${DAY}/hour=00/a\\.csv\\) read as ONE column .* set source\\.csv\\.delimiter: ";"`,
      ),
    );
  });

  it('a query that does not compile names source.query', async () => {
    await expectRefused(
      'bad-sql',
      job('bad-sql', 'in/csv', '  format: csv\n', 'select nope from source'),
      /source\.query failed in DuckDB: Binder Error/,
    );
    await expectRefused('bad-syntax', job('bad-syntax', 'in/csv', '  format: csv\n', 'selec 1'), /source\.query.*Parser Error/);
  });

  const hostile: { name: string; query: string; says: RegExp }[] = [
    {
      name: 'read-passwd',
      query: "select * from read_csv('/etc/passwd')",
      says: /source\.query tried to reach outside the partition's objects/,
    },
    { name: 'glob-root', query: "select * from glob('/*')", says: /outside the partition's objects/ },
    {
      name: 'copy-to',
      query: "copy (select * from source) to '/tmp/bfr-stolen.csv'",
      says: /source\.query (must be a SELECT.*COPY|tried to reach outside the partition's objects)/,
    },
    { name: 'attach', query: "attach '/tmp/bfr-x.db' as x", says: /source\.query must be a SELECT.*ATTACH/ },
    { name: 'install', query: 'install httpfs', says: /source\.query must be a SELECT.*(EXTENSION|LOAD)/ },
    { name: 'load', query: 'load httpfs', says: /source\.query must be a SELECT.*LOAD/ },
    { name: 'set', query: 'set enable_external_access = true', says: /source\.query must be a SELECT.*(SET|VARIABLE_SET)/ },
    {
      name: 'two-statements',
      query: "select * from source; copy (select 1) to '/tmp/bfr-y.csv'",
      says: /source\.query must be one SELECT statement, it has 2/,
    },
    { name: 'query-fn', query: "select * from query('copy (select 1) to ''/tmp/bfr-z.csv''')", says: /source\.query/ },
    { name: 'comment-breakout', query: "select * from source) to '/tmp/bfr-w.csv' (format csv); --", says: /source\.query/ },
  ];
  it.each(hostile)('hostile query: $name', async ({ name, query, says }) => {
    await expectRefused(`h-${name}`, job(`h-${name}`, 'in/csv', '  format: csv\n', query), says);
    for (const f of ['/tmp/bfr-stolen.csv', '/tmp/bfr-x.db', '/tmp/bfr-y.csv', '/tmp/bfr-z.csv', '/tmp/bfr-w.csv'])
      expect(existsSync(f)).toBe(false);
  });

  it('hostile SQL in a validation rule is refused the same way', async () => {
    const text = `${job('h-rule', 'in/csv', '  format: csv\n')}validation:
  - name: sneaky
    source: records
    target: "select count(*) as records from read_csv('/etc/passwd')"
`;
    await expectRefused('h-rule', text, /validation\.0\.target tried to reach outside the partition's objects/);
  });
});

describe("DuckDB's working memory", () => {
  it('too little fails the partition naming BACKFILL_RUNBOOK_LAKE_MEMORY (exit 1, nothing published); a resume with more publishes', async () => {
    const name = 'tight-memory';
    ws.writeJob(name, job(name, 'in/csv', '  format: csv\n'));
    const args = [name, ...one, '--run-id', `run-${name}`];
    ws.env.BACKFILL_RUNBOOK_LAKE_MEMORY = '1MB';
    let r;
    try {
      r = await runCli(ws, args);
    } finally {
      delete ws.env.BACKFILL_RUNBOOK_LAKE_MEMORY;
    }
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout + r.stderr).toMatch(
      /DuckDB ran out of its working memory for this partition \(1MB;.*Raise it with BACKFILL_RUNBOOK_LAKE_MEMORY/,
    );
    expect(r.stdout + r.stderr).not.toMatch(/SET threads|SET memory_limit/); // DuckDB's advice names settings a job cannot change
    expect(await listKeys(s3, bucket, `out/${name}/`)).toEqual([]);
    const resumed = await runCli(ws, ['--resume', '--run-id', `run-${name}`]);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect((await listKeys(s3, bucket, `out/${name}/`)).some((k) => k.endsWith('.parquet'))).toBe(true);
  });
});

describe('S3 keys are normalised before any check (every traversal form)', () => {
  const forms = [
    'events-backfill/../events/events_{date}_{hour}',
    'events-backfill/./events_{date}_{hour}',
    'events-backfill//events_{date}_{hour}',
    'events-backfill\\\\..\\\\events\\\\events_{date}_{hour}',
    'events-backfill/%2e%2e/events/events_{date}_{hour}',
    'events-backfill/..%2fevents/events_{date}_{hour}',
    'events-backfill/{date}/../../../../../tmp/x_{hour}',
    'events-backfill/{date}/{hour}/..',
  ];
  it.each(forms)('%s: exit 2, naming target.path and the value; nothing written', async (path) => {
    ws.writeJob(
      'trav',
      `name: trav
unit: hour
source:
  connection: warehouse
  query: select event_id from events where event_time >= :partition_start and event_time < :partition_end
target:
  kind: s3
  connection: lake
  path: ${JSON.stringify(path)}
  prefix: "events/"
  backfill_prefix: "events-backfill/"
write_mode: overwrite-partition
`,
    );
    const before = await listKeys(s3, bucket);
    const r = await runCli(ws, ['trav', ...one, '--run-id', 'run-trav']);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toContain('target.path');
    expect(r.stderr).toContain(JSON.stringify(path).slice(1, 20));
    expect(await listKeys(s3, bucket)).toEqual(before);
  });

  it('the S3 server itself refuses a key that walks out of its folder, over HTTP', async () => {
    const info = inject('s3');
    // a raw request: fetch and the SDK would collapse the dots before sending
    const put = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(info.endpoint);
        const req = request({ host: url.hostname, port: url.port, method: 'PUT', path, headers: { 'content-length': '1' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end('x');
      });
    for (const key of [
      '../../escape.txt',
      'a/../../escape.txt',
      '..%2F..%2Fescape.txt',
      'a/%2e%2e/%2e%2e/escape.txt',
      'a\\..\\..\\escape.txt',
    ]) {
      expect(await put(`/${bucket}/${key}`), key).toBe(400);
    }
    expect(existsSync(join(info.directory, '..', 'escape.txt'))).toBe(false);
    expect(existsSync(join(info.directory, 'escape.txt'))).toBe(false);
    expect(readdirSync(join(info.directory, '..')).filter((f) => f.startsWith('escape'))).toEqual([]);
  });
});

describe('SIGKILL in the middle of a partition, then resume', () => {
  it('leaves no orphan object visible to a reader and nothing doubled', async () => {
    const ROWS = 20_000;
    await seedEvents(db.client, 'big_events', { from: DAY, hours: 1, perHour: ROWS, seed: 9 });
    ws.writeJob(
      'kill-export',
      `name: kill-export
unit: hour
source:
  connection: warehouse
  query: select event_id, event_type, event_time, amount, note from big_events where event_time >= :partition_start and event_time < :partition_end
target:
  kind: s3
  connection: lake
  path: "killed/dt={date}/hour={hour}/"
  format: parquet
  records_per_object: 1000
write_mode: overwrite-partition
`,
    );
    const stem = `killed/dt=${DAY}/hour=00/`;
    // the runs' own temporary folder, where the partition's work folder goes
    const temp = mkdtempSync(join(tmpdir(), 'bfr-kill-temp-'));
    ws.env.TMPDIR = temp;
    const run = startCli(ws, ['kill-export', ...one, '--run-id', 'run-kill']);
    const killed = run.child.pid;
    // Killed in the middle of the partition: once its first data object is in the bucket, while
    // the other nineteen are still to come and the manifest with them.
    let exited = false;
    void run.done.then(() => (exited = true));
    for (;;) {
      const keys = await listKeys(s3, bucket, stem);
      if (keys.some((k) => k.endsWith('.parquet')) || exited) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    run.child.kill('SIGKILL');
    const first = await run.done;
    expect(first.signal, `the run ended before it could be killed mid-partition:\n${first.stdout}${first.stderr}`).toBe('SIGKILL');
    // a reader follows the manifest: before the resume there is none
    expect(await manifestOf(s3, bucket, stem)).toBeNull();
    // the killed process's partition folder (rows before upload) is left behind…
    const leftovers = (): string[] => readdirSync(temp).filter((f) => new RegExp(`^bfr-(lake|s3)-.+-${killed}-`).test(f));
    expect(leftovers()).not.toEqual([]);
    const resumed = await runCli(ws, ['--resume', '--run-id', 'run-kill']);
    delete ws.env.TMPDIR;
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    // …until the next run of this machine sweeps it (electron/engine/targets/s3/workDirs.ts),
    // and that run leaves nothing of its own
    expect(readdirSync(temp)).toEqual([]);
    rmSync(temp, { recursive: true, force: true });
    const manifest = await manifestOf(s3, bucket, stem);
    const keys = manifest?.objects.map((o) => o.key) ?? [];
    expect(await listKeys(s3, bucket, stem)).toEqual([...keys, `${stem}_complete`].sort());
    const [got] = await duckOver<{ n: number; ids: number }>(
      s3,
      bucket,
      keys,
      'select count(*)::int as n, count(distinct event_id)::int as ids from source',
    );
    expect(got).toEqual({ n: ROWS, ids: ROWS });
    expect(
      readdirSync(join(inject('s3').directory, bucket)).includes('._S3rver_uploads')
        ? readdirSync(join(inject('s3').directory, bucket, '._S3rver_uploads'))
        : [],
    ).toEqual([]);
  });
});
