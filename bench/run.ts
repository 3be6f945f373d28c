/**
 * `npm run bench`: the executor against baselines measured in the same run, on the same
 * generated data, on two PostgreSQL servers started here. Prints ratios and their targets.
 *
 *   (a) overwrite 1M rows over 30 partitions ÷ the same BEGIN; DELETE; INSERT … SELECT; COMMIT
 *       statements sent directly over one connection        — target ≤ 1.10
 *       Printed beside it (from the first pairs): the same with the partition read back for its
 *       fingerprint (the path for tables that may change rows), and the same job without its
 *       validation rule (the executor's own machinery, without the query the job runs).
 *   (b) cross-server COPY path rows/s ÷ a plain COPY TO/FROM pipe between the same servers
 *                                                           — target ≥ 0.80
 *   (c) the executor's own overhead per empty partition, over the same statements sent
 *       directly on the same empty partitions                — target < 20 ms
 *   (d), (e) S3: snapshot vs rclone, peak memory of an export  — see bench/s3.ts
 *   (f), (g) the sandbox: cold start (< 10 s) and stop (no process left) — see bench/sandbox.ts
 *   (limits) the largest accepted job file's parse and bundle's verify — see bench/limits.ts
 *   (h) run-backfill --version and status start-up ÷ node -e 0 — target ≤ 1.5× + 100 ms; bench/startup.ts
 *   (i) the throttle: a signal crossing its level → the executor's pause, and its recovery → the
 *       next partition, each against the check interval (200, 500, 1000 ms) — see bench/throttle.ts
 *   (l) the change by key over the same rows and partitions ÷ their plain count(*) + sum scans
 *       on both sides — aim ≤ 2; bench/changeByKey.ts
 *
 * (a), (b), (c) and (h) run the executor and its baseline in interleaved pairs and report the
 * median of the per-pair ratios with its 95% interval (bench/pairs.ts), adding pairs until the
 * interval is within ±2% ((c): ±10%, (h): ±3%) or BENCH_MAX_PAIRS (default 24) is reached.
 * BENCH_ROWS (default 1,000,000), BENCH_MIN_PAIRS (default 8) and BENCH_ROUNDS (default 6:
 * rounds of the S3 and sandbox benches, and of (a)'s variants) tune it.
 * BENCH_ONLY=pg runs (a)–(c) and skips the S3 benches (for iterating on the Postgres path);
 * BENCH_ONLY=a, b, c, h, i or l runs that one alone; BENCH_ONLY=s3, (d), (e), (j) and (k); BENCH_ONLY=sandbox runs (f) and (g) alone; BENCH_ONLY=limits, (limits).
 * BENCH_THROTTLE_TRIALS (default 5) sets (i)'s trials per interval. BENCH_CLI_ENV (a JSON object) adds
 * variables to the run-backfill process of (e) and (j), to try a setting's effect on memory.
 * BENCH_PROFILE=1 also prints, for (a) and (b), the time per partition of each statement kind
 * the executor sends (see bench/profile.ts), from the median round.
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { startEmbeddedPostgres, type PgServerInfo, type RunningPg } from '../electron/engine/sandbox/embeddedPostgres.ts';
import { benchJob, runExecutor } from './executor.ts';
import { installProfiler, printProfile, profiling, resetProfile, snapshotProfile, type Profile } from './profile.ts';
import { runChangeByKeyBench } from './changeByKey.ts';
import { runLimitsBench } from './limits.ts';
import { runS3Benches } from './s3.ts';
import { describePairs, measurePairs, median, type PairedResult } from './pairs.ts';
import { runSandboxBench } from './sandbox.ts';
import { runStartupBench } from './startup.ts';
import { runThrottleBench } from './throttle.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const MIN_PAIRS = Number(process.env.BENCH_MIN_PAIRS ?? 8);
const MAX_PAIRS = Number(process.env.BENCH_MAX_PAIRS ?? 24);
const DAYS = 30;
const FROM = '2026-01-01';
const TO = '2026-01-31';
const EMPTY_PARTITIONS = 200;
const ONLY = process.env.BENCH_ONLY ?? '';
const SOLO = ['a', 'b', 'c', 'h', 'i', 'l', 's3', 'sandbox', 'limits'] as const;
if (!['', 'pg', ...SOLO].includes(ONLY)) throw new Error(`BENCH_ONLY=${ONLY}: use pg, ${SOLO.join(', ')}`);
const want = (bench: (typeof SOLO)[number]): boolean =>
  ONLY === '' || ONLY === bench || (ONLY === 'pg' && ['a', 'b', 'c', 'l'].includes(bench));
if (process.env.BENCH_PROFILE === '1') installProfiler();

const TABLE_DDL = `(day date NOT NULL, id bigint NOT NULL, customer_id int NOT NULL, amount numeric(12,2) NOT NULL, note text, PRIMARY KEY (day, id))`;
const SOURCE_QUERY = `select day, id, customer_id, amount, note from src_events where day >= :partition_start and day < :partition_end`;

async function client(server: PgServerInfo, database = 'postgres'): Promise<pg.Client> {
  const c = new pg.Client({ host: server.host, port: server.port, user: server.user, password: server.password, database });
  await c.connect();
  return c;
}

async function seed(server: PgServerInfo, withSource: boolean): Promise<void> {
  const admin = await client(server);
  await admin.query('DROP DATABASE IF EXISTS bench');
  await admin.query('CREATE DATABASE bench');
  await admin.end();
  const c = await client(server, 'bench');
  await c.query(`CREATE SCHEMA mart`);
  await c.query(`CREATE TABLE mart.events ${TABLE_DDL}`);
  await c.query(`CREATE TABLE mart.empty_target ${TABLE_DDL}`);
  if (withSource) {
    await c.query(`CREATE TABLE src_events ${TABLE_DDL}`);
    await c.query(`CREATE TABLE src_empty ${TABLE_DDL}`);
    await c.query(
      `INSERT INTO src_events
       SELECT date '${FROM}' + (g % ${DAYS}), g, (g::bigint * 7919) % 50000, ((g::bigint * 104729) % 100000) / 100.0, 'order ' || g
         FROM generate_series(1, ${ROWS}) AS g`,
    );
    await c.query(`CREATE INDEX ON src_events (day)`);
    await c.query(`INSERT INTO mart.events SELECT * FROM src_events`);
    // Vacuumed once, as a settled table would be: hint bits and the visibility map set, so no
    // round pays for being the first to read the new rows.
    await c.query(`VACUUM ANALYZE`);
  }
  await c.end();
}

const validation = [
  {
    name: 'rows and amount',
    source: 'select count(*) as rows, sum(amount) as amount from src_events where day >= :partition_start and day < :partition_end',
    target: 'select count(*) as rows, sum(amount) as amount from mart.events where day >= :partition_start and day < :partition_end',
    tolerance: 0,
  },
];

/**
 * (a), (c) baseline: the statements the executor's pushdown boils down to, over one connection,
 * partition by partition: into mart.events from src_events, or (c) into the empty target from
 * the empty source.
 */
async function directStatements(server: PgServerInfo, profiles?: (Profile | undefined)[], empty = false): Promise<number> {
  const [target, source, days] = empty ? ['mart.empty_target', 'src_empty', EMPTY_PARTITIONS] : ['mart.events', 'src_events', DAYS];
  const c = await client(server, 'bench');
  resetProfile();
  const started = performance.now();
  for (let d = 0; d < days; d++) {
    const day = new Date(Date.parse(`${FROM}T00:00:00Z`) + d * 86_400_000).toISOString().slice(0, 10);
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    await c.query('BEGIN');
    await c.query(`DELETE FROM ${target} WHERE day >= $1 AND day < $2`, [day, next]);
    await c.query(
      `INSERT INTO ${target} (day, id, customer_id, amount, note) SELECT day, id, customer_id, amount, note FROM ${source} WHERE day >= $1 AND day < $2`,
      [day, next],
    );
    await c.query('COMMIT');
  }
  const ms = performance.now() - started;
  profiles?.push(profiling() ? snapshotProfile() : undefined);
  await c.end();
  return ms;
}

/**
 * Each pass leaves a million dead rows. A plain VACUUM would leave their space free, and the
 * next pass would write into it — into alternating halves of the table's file, which are not
 * equally fast (15% apart here). VACUUM FULL rewrites the live rows compactly, in the order the
 * last pass left them (by day, either side), so every pass starts from the same layout.
 */
async function vacuum(server: PgServerInfo): Promise<void> {
  const c = await client(server, 'bench');
  await c.query('VACUUM (FULL, ANALYZE) mart.events');
  await c.query('CHECKPOINT');
  await c.end();
}

async function truncateTarget(server: PgServerInfo): Promise<void> {
  const c = await client(server, 'bench');
  await c.query('TRUNCATE mart.events');
  await c.end();
}

/**
 * (b) baseline: one plain COPY pipe of every row from A to B, in text (the default format).
 * With `binary`, the same pipe in binary — not the target's baseline, printed beside it because
 * the executor copies in binary where the column types allow (see binaryCopyFits).
 */
async function plainCopyPipe(a: PgServerInfo, b: PgServerInfo, binary = false): Promise<number> {
  const format = binary ? ' (FORMAT binary)' : '';
  const src = await client(a, 'bench');
  const dst = await client(b, 'bench');
  await dst.query('TRUNCATE mart.events');
  const started = performance.now();
  await dst.query('BEGIN');
  await pipeline(
    src.query(copyTo(`COPY (SELECT day, id, customer_id, amount, note FROM src_events) TO STDOUT${format}`)),
    dst.query(copyFrom(`COPY mart.events (day, id, customer_id, amount, note) FROM STDIN${format}`)),
  );
  await dst.query('COMMIT');
  const ms = performance.now() - started;
  await Promise.all([src.end(), dst.end()]);
  return ms;
}

/** The profile of the round whose time is nearest the median. */
function medianProfile(times: readonly number[], profiles: (Profile | undefined)[]): Profile | undefined {
  const m = median(times);
  const nearest = times.reduce((best, t, i) => (Math.abs(t - m) < Math.abs((times[best] ?? Infinity) - m) ? i : best), 0);
  return profiles[nearest];
}

function line(name: string, value: string, target: string, pass: boolean, detail: string, skipped = false): void {
  console.log(
    `${name.padEnd(44)} ${value.padStart(10)}   target ${target.padEnd(8)} ${skipped ? 'SKIP' : pass ? 'PASS' : 'MISS'}   ${detail}`,
  );
}

async function main(): Promise<void> {
  // These need no PostgreSQL of the bench's own, nor a million rows seeded.
  if (want('limits')) await runLimitsBench(line, ROUNDS);
  if (ONLY === 'limits') return;
  if (ONLY === 'h') return runStartupBench(line);
  if (ONLY === 'sandbox') return runSandboxBench(line, ROUNDS);
  if (ONLY === 'i') return throttleAlone();
  const servers: RunningPg[] = [];
  try {
    const password = randomBytes(12).toString('base64url');
    // No autovacuum: a million dead rows per pass would wake it at a random moment in the middle
    // of one side's measurement. Each round vacuums explicitly before it starts instead.
    const quiet = ['-c', 'autovacuum=off', '-c', 'shared_buffers=1GB'];
    const a = await startEmbeddedPostgres({
      name: 'bench-a',
      dir: join(tmpdir(), `bfr-bench-a-${process.pid}`),
      password,
      persistent: false,
      fast: true,
      extraFlags: quiet,
    });
    servers.push(a);
    const b = await startEmbeddedPostgres({
      name: 'bench-b',
      dir: join(tmpdir(), `bfr-bench-b-${process.pid}`),
      password,
      persistent: false,
      fast: true,
      extraFlags: quiet,
    });
    servers.push(b);
    console.log(`Seeding ${ROWS.toLocaleString('en-US')} rows over ${DAYS} daily partitions…`);
    await seed(a.info, true);
    await seed(b.info, false);
    const db = { server: a.info, database: 'bench' };
    const jobA = benchJob({
      name: 'bench-overwrite',
      sourceQuery: SOURCE_QUERY,
      table: 'mart.events',
      partitionColumn: 'day',
      key: ['day', 'id'],
      validation,
    });

    const readBack: number[] = [];
    const noRule: number[] = [];
    const readBackMs: number[] = [];
    const noRuleMs: number[] = [];
    const reconcile: number[] = [];
    const profilesA: (Profile | undefined)[] = [];
    const profilesDirect: (Profile | undefined)[] = [];
    const profilesReadBack: (Profile | undefined)[] = [];
    const profilesNoRule: (Profile | undefined)[] = [];
    // The same job without its validation rule: the executor's own machinery alone.
    const jobNoRule = benchJob({
      name: 'bench-overwrite-norule',
      sourceQuery: SOURCE_QUERY,
      table: 'mart.events',
      partitionColumn: 'day',
      key: ['day', 'id'],
    });
    const executorPass = async (variant: 'as shipped' | 'read back' | 'no rule'): Promise<number> => {
      await vacuum(a.info);
      const job = variant === 'no rule' ? jobNoRule : jobA;
      const outcome = await runExecutor({ job, from: FROM, to: TO, source: db, target: db, scanTarget: variant === 'read back' });
      if (outcome.status !== 'succeeded') throw new Error(`executor run ${outcome.status}: ${outcome.reason}`);
      (variant === 'as shipped' ? profilesA : variant === 'read back' ? profilesReadBack : profilesNoRule).push(outcome.profile);
      if (variant === 'as shipped') reconcile.push(outcome.ms - outcome.writeMs);
      return outcome.writeMs;
    };
    const directPass = async (): Promise<number> => {
      await vacuum(a.info);
      return directStatements(a.info, profilesDirect);
    };
    let resultA: PairedResult | undefined;
    if (want('a')) {
      // Both paths once, so caches are equally warm; then pairs until the ratio settles.
      await directStatements(a.info);
      await runExecutor({ job: jobA, from: FROM, to: TO, source: db, target: db });
      resultA = await measurePairs({
        subject: () => executorPass('as shipped'),
        baseline: directPass,
        minPairs: MIN_PAIRS,
        maxPairs: MAX_PAIRS,
        // The variants beside it, each against its own pair's direct pass, in the first rounds.
        onPair: async (i, _executorMs, directMs) => {
          if (i >= ROUNDS) return;
          readBackMs.push(await executorPass('read back'));
          noRuleMs.push(await executorPass('no rule'));
          readBack.push((readBackMs.at(-1) ?? Number.NaN) / directMs);
          noRule.push((noRuleMs.at(-1) ?? Number.NaN) / directMs);
        },
      });
    }

    const jobB = benchJob({
      name: 'bench-copy',
      sourceQuery: SOURCE_QUERY,
      table: 'mart.events',
      partitionColumn: 'day',
      key: ['day', 'id'],
    });
    const binaryPipeMs: number[] = [];
    const profilesB: (Profile | undefined)[] = [];
    let resultB: PairedResult | undefined;
    if (want('b')) {
      resultB = await measurePairs({
        subject: async () => {
          await truncateTarget(b.info); // both paths load an empty table: the COPY path is measured, not DELETE
          const outcome = await runExecutor({ job: jobB, from: FROM, to: TO, source: db, target: { server: b.info, database: 'bench' } });
          if (outcome.status !== 'succeeded') throw new Error(`executor COPY run ${outcome.status}: ${outcome.reason}`);
          profilesB.push(outcome.profile);
          return outcome.writeMs;
        },
        baseline: () => plainCopyPipe(a.info, b.info),
        // rows/s of the executor ÷ rows/s of the pipe
        stat: (executorMs, pipeMs) => pipeMs / executorMs,
        minPairs: MIN_PAIRS,
        maxPairs: MAX_PAIRS,
        onPair: async (i) => {
          if (i < ROUNDS) binaryPipeMs.push(await plainCopyPipe(a.info, b.info, true));
        },
      });
    }

    const jobC = benchJob({
      name: 'bench-empty',
      sourceQuery: SOURCE_QUERY.replace('src_events', 'src_empty'),
      table: 'mart.empty_target',
      partitionColumn: 'day',
      key: ['day', 'id'],
    });
    const emptyTo = new Date(Date.parse(`${FROM}T00:00:00Z`) + EMPTY_PARTITIONS * 86_400_000).toISOString().slice(0, 10);
    let resultC: PairedResult | undefined;
    if (want('c')) {
      resultC = await measurePairs({
        subject: async () => (await runExecutor({ job: jobC, from: FROM, to: emptyTo, source: db, target: db })).writeMs,
        baseline: () => directStatements(a.info, undefined, true),
        // the executor's own milliseconds per partition, over what the statements cost anyway
        stat: (executorMs, directMs) => (executorMs - directMs) / EMPTY_PARTITIONS,
        minPairs: MIN_PAIRS,
        maxPairs: MAX_PAIRS,
        precision: 0.1,
      });
    }

    console.log('');
    console.log(`Backfill Runbook benchmarks — ${ROWS.toLocaleString('en-US')} rows, ${DAYS} partitions`);
    const ms = (v: readonly number[]) => `${median(v).toFixed(0)} ms`;
    if (resultA) {
      line(
        '(a) executor ÷ direct statements',
        resultA.median.toFixed(3),
        '≤ 1.10',
        resultA.median <= 1.1,
        `${describePairs(resultA)}; medians: executor ${ms(resultA.subjectMs)}, direct ${ms(resultA.baselineMs)} (+ reconciliation ${ms(reconcile)})`,
      );
      console.log(
        `    the same, the partition read back for its fingerprint: ${median(readBack).toFixed(3)} (median of ${readBack.length} paired ratios; the path for tables that may change rows)`,
      );
      console.log(
        `    the same job without its validation rule: ${median(noRule).toFixed(3)} (median of ${noRule.length} paired ratios; the executor's own lock, snapshot, fingerprint, marker and ledger)`,
      );
      console.log(`    per pair, executor ÷ direct: ${resultA.values.map((v) => v.toFixed(3)).join(' ')}`);
    }
    if (resultB) {
      const rps = (msList: readonly number[]) => Math.round(ROWS / (median(msList) / 1000)).toLocaleString('en-US');
      line(
        '(b) cross-server COPY ÷ plain COPY pipe',
        resultB.median.toFixed(3),
        '≥ 0.80',
        resultB.median >= 0.8,
        `${describePairs(resultB)}; executor ${rps(resultB.subjectMs)} rows/s, pipe ${rps(resultB.baselineMs)} rows/s (a binary pipe: ${rps(binaryPipeMs)} rows/s)`,
      );
    }
    if (resultC)
      line(
        '(c) overhead per empty partition',
        `${resultC.median.toFixed(2)} ms`,
        '< 20 ms',
        resultC.high < 20,
        `${describePairs(resultC, 2, 'differences')} of (executor − direct statements) ÷ ${EMPTY_PARTITIONS} partitions; executor ${(median(resultC.subjectMs) / EMPTY_PARTITIONS).toFixed(2)} ms, direct ${(median(resultC.baselineMs) / EMPTY_PARTITIONS).toFixed(2)} ms per partition`,
      );
    if (want('l'))
      await runChangeByKeyBench(a.info, b.info, line, {
        sourceQuery: SOURCE_QUERY,
        from: FROM,
        to: TO,
        minPairs: MIN_PAIRS,
        maxPairs: MAX_PAIRS,
        rounds: ROUNDS,
      });
    if (resultA) {
      printProfile('(a) direct statements', medianProfile(resultA.baselineMs, profilesDirect), median(resultA.baselineMs), DAYS);
      printProfile('(a) executor, pushdown', medianProfile(resultA.subjectMs, profilesA), median(resultA.subjectMs), DAYS);
      printProfile('(a) executor, pushdown, partition read back', medianProfile(readBackMs, profilesReadBack), median(readBackMs), DAYS);
      printProfile('(a) executor, pushdown, no validation rule', medianProfile(noRuleMs, profilesNoRule), median(noRuleMs), DAYS);
    }
    if (resultB)
      printProfile('(b) executor, cross-server COPY', medianProfile(resultB.subjectMs, profilesB), median(resultB.subjectMs), DAYS);
    if (!want('s3')) console.log(`(d), (e), (j), (k) skipped: BENCH_ONLY=${ONLY}`);
    else for (const l of await runS3Benches(a.info, ROWS)) line(l.name, l.value, l.target, l.pass, l.detail, l.skipped);
    if (want('sandbox')) await runSandboxBench(line, ROUNDS);
    if (want('h')) await runStartupBench(line);
    if (want('i')) await runThrottleBench(line, a.info);
  } finally {
    for (const s of servers.reverse()) await s.stop().catch(() => undefined);
  }
}

/** (i) alone needs one PostgreSQL and no seeded million rows. */
async function throttleAlone(): Promise<void> {
  const server = await startEmbeddedPostgres({
    name: 'bench-throttle',
    dir: join(tmpdir(), `bfr-bench-throttle-${process.pid}`),
    password: randomBytes(12).toString('base64url'),
    persistent: false,
    fast: true,
  });
  try {
    await runThrottleBench(line, server.info);
  } finally {
    await server.stop();
  }
}

await main();
