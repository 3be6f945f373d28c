/**
 * The S3 benchmarks of `npm run bench`, against one s3rver started here on loopback:
 *
 *   (d) snapshot of a 2,000-object partition (server-side copies) ÷ `rclone copy` of the same
 *       prefix, same server, same concurrency                 — target ≤ 1.0
 *   (e) peak memory (RSS high-water of the run-backfill process) exporting 1M rows from
 *       Postgres to one S3 partition                           — target < 200 MB
 *   (j) the same export's peak RSS as Parquet and as gzipped JSON Lines — target ≤ 150 MB each
 *   (k) an S3 Parquet → Parquet transform of those 1M rows (run-backfill, objects through the
 *       S3 client) ÷ DuckDB running the same query over the same files on local disk
 *                                                              — target ≤ 1.5
 *
 * (d) prints a SKIP line saying why when rclone is not installed (Debian: apt-get install rclone).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { s3ConnectionSchema } from '../shared/schemas.ts';
import { S3Bucket } from '../electron/engine/targets/s3/bucket.ts';
import { createS3Client } from '../electron/engine/targets/s3/client.ts';
import { mapLimit } from '../electron/engine/targets/s3/concurrency.ts';
import { snapshotS3Partition } from '../electron/engine/targets/s3/snapshot.ts';
import type { PgServerInfo } from '../electron/engine/sandbox/embeddedPostgres.ts';
// the same s3rver the integration tests run (in its own process: see s3rverProcess.mjs)
import { startS3rver } from '../test/support/s3GlobalSetup.ts';

const OBJECTS = Number(process.env.BENCH_S3_OBJECTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_S3_CONCURRENCY ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** (k)'s rounds take about 2.5 s each: enough of them that one slow round does not move the median. */
const K_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CLI = resolve(import.meta.dirname, '../bin/run-backfill.mjs');
const KEY = 'S3RVER';
const TAGS = { source: 'backfill', run_id: 'bench-run', plan_hash: 'f'.repeat(64) };

export interface BenchLine {
  name: string;
  value: string;
  target: string;
  pass: boolean;
  detail: string;
  /** not measured (detail says why): printed SKIP, neither a pass nor a miss */
  skipped?: boolean;
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function startS3(dir: string): Promise<{ endpoint: string; close: () => Promise<void> }> {
  const { info, close } = await startS3rver(dir);
  return { endpoint: info.endpoint, close };
}

function openBucket(endpoint: string, name: string, concurrency: number): S3Bucket {
  const connection = s3ConnectionSchema.parse({ kind: 's3', bucket: name, endpoint, force_path_style: true });
  return new S3Bucket(
    name,
    createS3Client({ name: 'bench', connection, credentials: { accessKeyId: KEY, secretAccessKey: KEY } }, concurrency),
    concurrency,
  );
}

/** Why (d) cannot compare against rclone here, or undefined when `rclone` runs. */
async function rcloneMissing(): Promise<string | undefined> {
  return promisify(execFile)('rclone', ['version']).then(
    () => undefined,
    (err: NodeJS.ErrnoException) =>
      err.code === 'ENOENT'
        ? 'rclone is not installed (Debian: apt-get install rclone), so there is no baseline: nothing measured'
        : `\`rclone version\` failed (${err.message.split('\n')[0] ?? ''}): nothing measured`,
  );
}

const RCLONE_BENCH = `(d) S3 snapshot ÷ rclone copy (${OBJECTS} objects)`;

/** (d): our snapshot and rclone's server-side copy of the same prefix, alternating rounds. */
async function snapshotVsRclone(endpoint: string): Promise<BenchLine> {
  const name = 'bench-snapshot';
  const bucket = openBucket(endpoint, name, CONCURRENCY);
  await bucket.client.send(new (await import('@aws-sdk/client-s3')).CreateBucketCommand({ Bucket: name }));
  const prefix = 'events/day-2026-01-20/';
  const body = 'x'.repeat(4096);
  await mapLimit(
    Array.from({ length: OBJECTS }, (_, i) => i),
    16,
    (i) =>
      bucket.put(`${prefix}obj-${String(i).padStart(5, '0')}.json`, body, 'application/json', {
        tags: TAGS,
        metadata: { 'backfill-run-id': 'bench' },
      }),
  );
  // A custom CA bundle in the environment makes rclone refuse a plain-HTTP transport.
  const { AWS_CA_BUNDLE: _caBundle, ...inherited } = process.env;
  const env = {
    ...inherited,
    RCLONE_CONFIG_BENCH_TYPE: 's3',
    RCLONE_CONFIG_BENCH_PROVIDER: 'Other',
    RCLONE_CONFIG_BENCH_ENDPOINT: endpoint,
    RCLONE_CONFIG_BENCH_ACCESS_KEY_ID: KEY,
    RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY: KEY,
    RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE: 'true',
  };
  const snapshot = async (round: string): Promise<number> => {
    const started = performance.now();
    const snap = await snapshotS3Partition(bucket, prefix, `bench-${round}`, '2026-01-20');
    const ms = performance.now() - started;
    if (snap.objects.length !== OBJECTS) throw new Error(`snapshot copied ${snap.objects.length} objects, expected ${OBJECTS}`);
    // tags kept: a copy carries what the original did
    const copied = await bucket.getTags(`_snapshots/bench-${round}/${prefix}obj-00000.json`);
    if (copied.run_id !== TAGS.run_id) throw new Error(`the snapshot lost the objects' tags: ${JSON.stringify(copied)}`);
    return ms;
  };
  const rclone = async (round: string): Promise<number> => {
    const started = performance.now();
    await promisify(execFile)(
      'rclone',
      [
        'copy',
        `bench:${name}/${prefix}`,
        `bench:${name}/_rclone/${round}/${prefix}`,
        '--transfers',
        String(CONCURRENCY),
        '--checkers',
        String(CONCURRENCY),
        '--s3-no-check-bucket',
        '--retries',
        '1',
      ],
      { env, maxBuffer: 16 * 1024 * 1024 },
    );
    const ms = performance.now() - started;
    const copied = (await bucket.listAll(`_rclone/${round}/${prefix}`)).length;
    if (copied !== OBJECTS) throw new Error(`rclone copied ${copied} objects, expected ${OBJECTS}`);
    return ms;
  };
  // One untimed round each warms the server (and its file system) for both; then the order
  // alternates, because each copy makes the bucket bigger for the next one.
  await snapshot('warm');
  await rclone('warm');
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      ours.push(await snapshot(String(r)));
      theirs.push(await rclone(String(r)));
    } else {
      theirs.push(await rclone(String(r)));
      ours.push(await snapshot(String(r)));
    }
  }
  bucket.close();
  const ratio = median(ours) / median(theirs);
  return {
    name: RCLONE_BENCH,
    value: ratio.toFixed(3),
    target: '≤ 1.0',
    pass: ratio <= 1,
    detail: `snapshot ${median(ours).toFixed(0)} ms, rclone ${median(theirs).toFixed(0)} ms, concurrency ${CONCURRENCY}`,
  };
}

/** RSS high-water (VmHWM) of a process, sampled from /proc until it exits. */
function watchPeak(pid: number): { stop: () => number } {
  let peak = 0;
  const read = (): void => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak = Math.max(peak, kb * 1024);
    } catch {
      // exited
    }
  };
  const timer = setInterval(read, 25);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

/**
 * BENCH_CLI_ENV: a JSON object of extra variables for the exporting run-backfill process, to try
 * a setting's effect on its memory (e.g. {"BACKFILL_RUNBOOK_LAKE_MEMORY":"64MB"}).
 */
function cliEnv(): Record<string, string> {
  const raw = process.env.BENCH_CLI_ENV;
  if (!raw) return {};
  const parsed: unknown = JSON.parse(raw);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('BENCH_CLI_ENV must be a JSON object');
  return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
}

/** (e): the built run-backfill exporting every row of src_events (1M) into ONE monthly S3 partition. */
async function exportMemory(
  endpoint: string,
  pg: PgServerInfo,
  rows: number,
  format: { label: string; target: string; limitMb: number; tag: string } = { label: '', target: '', limitMb: 200, tag: '(e)' },
): Promise<BenchLine> {
  const name = `bench-export${format.label ? `-${format.label}` : ''}`;
  const bucket = openBucket(endpoint, name, 4);
  await bucket.client.send(new (await import('@aws-sdk/client-s3')).CreateBucketCommand({ Bucket: name }));
  bucket.close();
  const dir = mkdtempSync(join(tmpdir(), 'bfr-bench-s3-'));
  mkdirSync(join(dir, 'jobs'));
  writeFileSync(
    join(dir, 'backfill.config.yaml'),
    `connections:
  warehouse: { kind: postgres, url: "postgres://${pg.user}@${pg.host}:${pg.port}/bench", password_env: BENCH_PG_PASSWORD }
  lake: { kind: s3, bucket: ${name}, endpoint: "${endpoint}", force_path_style: true, access_key_id_env: BENCH_S3_KEY, secret_access_key_env: BENCH_S3_KEY }
`,
  );
  writeFileSync(
    join(dir, 'jobs', 'bench-export.yaml'),
    // the whole table as ONE partition: memory must not grow with a partition's size
    `name: bench-export
unit: day
source:
  connection: warehouse
  query: select day, id, customer_id, amount, note from src_events
target:
  kind: s3
  connection: lake
  path: "export/dt={date}/"
${format.target}write_mode: overwrite-partition
validation:
  - name: every row exported
    source: select count(*) as records from src_events
    target: records
`,
  );
  const env = { PATH: process.env.PATH, HOME: dir, BENCH_PG_PASSWORD: pg.password, BENCH_S3_KEY: KEY, ...cliEnv() };
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      CLI,
      'bench-export',
      '--from',
      '2026-01-01',
      '--to',
      '2026-01-02',
      '--run-id',
      'bench-export-1',
      '--db',
      join(dir, 'ledger.sqlite'),
      '--config',
      join(dir, 'backfill.config.yaml'),
      '--jobs',
      join(dir, 'jobs'),
    ],
    {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const peak = watchPeak(child.pid ?? 0);
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  const bytes = peak.stop();
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0 || !output.includes(`${rows} rows`)) throw new Error(`export run failed (exit ${code}):\n${output}`);
  const mb = bytes / (1024 * 1024);
  return {
    name: `${format.tag} peak RSS exporting ${rows.toLocaleString('en-US')} rows PG → S3${format.label ? ` as ${format.label}` : ''}`,
    value: `${mb.toFixed(0)} MB`,
    target: format.limitMb === 200 ? '< 200 MB' : `≤ ${format.limitMb} MB`,
    pass: format.limitMb === 200 ? mb < 200 : mb <= format.limitMb,
    detail: `one partition, ${((performance.now() - started) / 1000).toFixed(1)} s for the whole run-backfill process`,
  };
}

/**
 * (k): run-backfill transforming the Parquet partition (e, j) wrote into another Parquet
 * partition with a DuckDB query, against DuckDB itself running the same query over the same
 * files copied to local disk, in the same process tree and the same run; alternating rounds.
 */
async function transformVsDuckDb(endpoint: string, rows: number): Promise<BenchLine> {
  const name = 'bench-export-parquet';
  const bucket = openBucket(endpoint, name, 4);
  const sourceKeys = (await bucket.listAll('export/dt=2026-01-01/')).map((o) => o.key).filter((k) => k.endsWith('.parquet'));
  if (sourceKeys.length === 0) throw new Error('(k) needs the Parquet export of (j) first');
  const dir = mkdtempSync(join(tmpdir(), 'bfr-bench-k-'));
  mkdirSync(join(dir, 'jobs'));
  const local = join(dir, 'local');
  mkdirSync(local);
  for (const [i, key] of sourceKeys.entries()) {
    const { pipeline } = await import('node:stream/promises');
    const { createWriteStream } = await import('node:fs');
    await pipeline(await bucket.getStream(key), createWriteStream(join(local, `${i}.parquet`)));
  }
  bucket.close();
  const query = `select id, customer_id, amount * 2 as amount2, upper(note) as note, day from source where amount is not null qualify row_number() over (partition by id order by day) = 1`;
  writeFileSync(
    join(dir, 'backfill.config.yaml'),
    `connections:
  lake: { kind: s3, bucket: ${name}, endpoint: "${endpoint}", force_path_style: true, access_key_id_env: BENCH_S3_KEY, secret_access_key_env: BENCH_S3_KEY }
`,
  );
  writeFileSync(
    join(dir, 'jobs', 'bench-transform.yaml'),
    `name: bench-transform
unit: day
source:
  kind: s3
  connection: lake
  path: "export/dt={date}/"
  format: parquet
  query: ${JSON.stringify(query)}
target:
  kind: s3
  connection: lake
  path: "transformed/dt={date}/"
  format: parquet
write_mode: overwrite-partition
`,
  );
  const env = { PATH: process.env.PATH, HOME: dir, BENCH_S3_KEY: KEY };
  const ours = async (round: number): Promise<number> => {
    const started = performance.now();
    const r = await promisify(execFile)(
      process.execPath,
      [
        CLI,
        'bench-transform',
        '--from',
        '2026-01-01',
        '--to',
        '2026-01-02',
        '--run-id',
        `bench-k-${round}`,
        '--db',
        join(dir, 'ledger.sqlite'),
        '--config',
        join(dir, 'backfill.config.yaml'),
        '--jobs',
        join(dir, 'jobs'),
      ],
      { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 },
    ).catch((err: { stdout?: string; stderr?: string }) => {
      throw new Error(`(k) transform failed: ${err.stdout ?? ''}${err.stderr ?? ''}`);
    });
    if (!r.stdout.includes('published'))
      throw new Error(`(k) transform did not publish:
${r.stdout}`);
    return performance.now() - started;
  };
  // the baseline: DuckDB's own CLI-equivalent, a fresh process running the same COPY on local files
  const script = join(dir, 'duck.mjs');
  writeFileSync(
    script,
    `import { createRequire } from 'node:module';
const { DuckDBInstance } = createRequire(${JSON.stringify(resolve(import.meta.dirname, '../package.json'))})('@duckdb/node-api');
const db = await DuckDBInstance.create(':memory:', { threads: '2' });
const c = await db.connect();
await c.run("CREATE VIEW source AS SELECT * FROM read_parquet('${local}/*.parquet')");
await c.run(\`COPY (${query}) TO '${join(dir, 'out.parquet')}' (FORMAT parquet, COMPRESSION zstd)\`);
`,
  );
  const theirs = async (): Promise<number> => {
    const started = performance.now();
    await promisify(execFile)(process.execPath, [script], { cwd: resolve(import.meta.dirname, '..'), env });
    return performance.now() - started;
  };
  const a: number[] = [];
  const b: number[] = [];
  await ours(-1);
  await theirs();
  for (let r = 0; r < K_ROUNDS; r++) {
    if (r % 2 === 0) {
      a.push(await ours(r));
      b.push(await theirs());
    } else {
      b.push(await theirs());
      a.push(await ours(r));
    }
  }
  rmSync(dir, { recursive: true, force: true });
  // each round's pair is taken back to back: its ratio cancels the machine's drift between rounds
  const ratios = a.map((x, i) => x / (b[i] ?? Number.NaN)).sort((x, y) => x - y);
  const ratio = median(ratios);
  return {
    name: `(k) S3 Parquet → Parquet transform of ${rows.toLocaleString('en-US')} rows ÷ DuckDB on local files`,
    value: ratio.toFixed(3),
    target: '≤ 1.5',
    pass: ratio <= 1.5,
    detail: `median of ${K_ROUNDS} paired ratios (spread ${ratios[0]?.toFixed(2)}–${ratios.at(-1)?.toFixed(2)}); run-backfill ${median(a).toFixed(0)} ms, DuckDB ${median(b).toFixed(0)} ms; rounds ${a.map((x) => x.toFixed(0)).join('/')} vs ${b.map((x) => x.toFixed(0)).join('/')}`,
  };
}

/** Runs (d), (e), (j) and (k); `pg` holds the `bench` database seeded with src_events by bench/run.ts. */
export async function runS3Benches(pg: PgServerInfo, rows: number): Promise<BenchLine[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bfr-bench-s3rver-'));
  const s3 = await startS3(dir);
  const lines: BenchLine[] = [];
  try {
    const missing = await rcloneMissing();
    if (missing === undefined) lines.push(await snapshotVsRclone(s3.endpoint));
    else lines.push({ name: RCLONE_BENCH, value: 'skipped', target: '≤ 1.0', pass: false, detail: missing, skipped: true });
    lines.push(await exportMemory(s3.endpoint, pg, rows));
    lines.push(await exportMemory(s3.endpoint, pg, rows, { label: 'parquet', target: '  format: parquet\n', limitMb: 150, tag: '(j)' }));
    lines.push(
      await exportMemory(s3.endpoint, pg, rows, { label: 'jsonl-gzip', target: '  compression: gzip\n', limitMb: 150, tag: '(j)' }),
    );
    lines.push(await transformVsDuckDb(s3.endpoint, rows));
  } finally {
    await s3.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}
