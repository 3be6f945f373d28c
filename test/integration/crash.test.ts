/**
 * Crash safety: `run-backfill` killed with SIGKILL at random moments, then resumed. Every
 * trial must end with the target equal to the oracle, no duplicate keys, and the ledger
 * agreeing with the target's markers. CRASH_TRIALS raises the count (scripts/crash-trials.sh).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { createOrderMart, seedOrders } from '../support/dataset.ts';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, orderMartJob, pgConfig, runCli, startCli, type Workspace } from '../support/workspace.ts';
import { buildOracle, martMd5, martStats } from '../support/oracle.ts';

const TRIALS = Number(process.env.CRASH_TRIALS ?? 50);
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
const MODES = (process.env.CRASH_MODES ?? 'overwrite-partition,upsert,append-dedupe').split(',');

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'crash');
  await seedOrders(db.client, { from: '2026-04-01', days: 60, ordersPerDay: 300, seed: 7 });
  await createOrderMart(db.client);
  await buildOracle(db.client);
  ws = makeWorkspace('crash', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
});

afterAll(async () => {
  await db?.drop();
});

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FROM = '2026-04-05';
const TO = '2026-04-25';

describe(`SIGKILL at random moments, then resume (${TRIALS} trials per mode, seed ${SEED})`, () => {
  for (const mode of MODES) {
    it(
      mode,
      async () => {
        const random = prng(SEED);
        const job = `crash-${mode}`;
        const table = `mart.crash_${mode.replace('-', '_')}`;
        await db.client.query(`create table ${table} (like mart.mart_order_daily including all)`);
        ws.writeJob(job, orderMartJob({ name: job, table, mode, billing: false }));
        const outcomes = { killedBeforeStart: 0, killedMidRun: 0, finishedBeforeKill: 0, resumes: 0 };
        // Calibrate: how long an uninterrupted run takes once its plan is printed (process
        // start-up is not interesting); kills land anywhere in that window.
        const calibration = await timedRun([
          job,
          '--from',
          FROM,
          '--to',
          TO,
          '--run-id',
          `crash-${mode}-${SEED}-calibration`,
          '--sleep-ms',
          '10',
        ]);
        const windowMs = calibration.afterPlanMs;
        for (let trial = 0; trial < TRIALS; trial++) {
          // Start from a wrong target each time, as a real backfill would (append-dedupe only
          // adds missing keys by design, so it starts from an empty partition instead).
          await db.client.query(`truncate ${table}`);
          if (mode !== 'append-dedupe')
            await db.client.query(
              `insert into ${table} select order_date, customer_id, orders + 1, paid_amount from oracle.mart_order_daily where order_date >= '${FROM}' and order_date < '${TO}' and customer_id % 3 = 0`,
            );
          const runId = `crash-${mode}-${SEED}-${trial}`;
          const args = [job, '--from', FROM, '--to', TO, '--run-id', runId, '--sleep-ms', '10'];
          const { child, done } = startCli(ws, args);
          const delay = Math.floor(random() * windowMs);
          let timer: NodeJS.Timeout | undefined;
          child.stdout?.on('data', (d: Buffer) => {
            if (!timer && d.toString().includes('Plan ')) timer = setTimeout(() => child.kill('SIGKILL'), delay);
          });
          const first = await done;
          clearTimeout(timer);
          if (first.signal !== 'SIGKILL') {
            expect(first.stderr).toBe('');
            expect(first.code).toBe(0);
            outcomes.finishedBeforeKill++;
          } else if (!runExists(runId)) {
            outcomes.killedBeforeStart++;
            const again = await runCli(ws, args);
            expect(again.code, again.stderr).toBe(0);
          } else {
            outcomes.killedMidRun++;
            outcomes.resumes++;
            const resumed = await runCli(ws, ['--resume', '--run-id', runId]);
            expect(resumed.code, `${resumed.stdout}\n${resumed.stderr}`).toBe(0);
          }
          expect(await martMd5(db.client, FROM, TO, table), `trial ${trial}: target differs from the oracle`).toBe(
            await martMd5(db.client, FROM, TO, 'oracle.mart_order_daily'),
          );
          expect((await martStats(db.client, table)).duplicates).toBe(0);
          await expectLedgerAgreesWithMarkers(runId, table);
        }
        console.info(`crash trials ${mode}: ${JSON.stringify(outcomes)} (seed ${SEED}, uninterrupted run ${windowMs} ms after its plan)`);
        expect(outcomes.killedMidRun).toBeGreaterThan(0);
      },
      TRIALS * 10_000,
    );
  }
});

async function timedRun(args: string[]): Promise<{ afterPlanMs: number }> {
  const { child, done } = startCli(ws, args);
  let planAt = 0;
  child.stdout?.on('data', (d: Buffer) => {
    if (!planAt && d.toString().includes('Plan ')) planAt = Date.now();
  });
  const r = await done;
  expect(r.code, r.stderr).toBe(0);
  return { afterPlanMs: Date.now() - planAt };
}

function runExists(runId: string): boolean {
  if (!existsSync(ws.db)) return false; // killed before the ledger was even created
  const sqlite = new Database(ws.db, { readonly: true });
  try {
    return sqlite.prepare('select 1 from runs where run_id = ?').get(runId) !== undefined;
  } finally {
    sqlite.close();
  }
}

async function expectLedgerAgreesWithMarkers(runId: string, table: string): Promise<void> {
  const sqlite = new Database(ws.db, { readonly: true });
  const ledger = sqlite
    .prepare(
      `select partition_key as key, attempt, rows_written as rows, checksum from partitions where run_id = ? and status = 'published' order by partition_key`,
    )
    .all(runId) as { key: string; attempt: number; rows: number; checksum: string }[];
  const total = (sqlite.prepare(`select count(*) as n from partitions where run_id = ?`).get(runId) as { n: number }).n;
  sqlite.close();
  const marks = await db.client.query<{ key: string; attempt: number; rows: number; checksum: string }>(
    `select partition_key as key, attempt, rows_written::int as rows, checksum from backfill_runbook.partition_marks
      where target_table = $1 and run_id = $2 order by partition_key`,
    [table, runId],
  );
  expect(ledger.length).toBe(total);
  expect(marks.rows).toEqual(ledger);
}
