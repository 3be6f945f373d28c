/**
 * `run-backfill` end to end on a real PostgreSQL: dry run, execution, reconciliation,
 * idempotency in every write mode, status. Outcomes are rows, checksums and exit codes.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import { createOrderMart, orderedPartitionMd5, seedOrders } from '../support/dataset.ts';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, orderMartJob, pgConfig, runCli, type Workspace } from '../support/workspace.ts';
import { buildOracle, martMd5, martStats } from '../support/oracle.ts';
import { signOff } from '../support/signoff.ts';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;

let db: TestDb;
let ws: Workspace;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'cli');
  await seedOrders(db.client, { from: '2026-04-01', days: 120, ordersPerDay: 200, seed: 42 });
  await createOrderMart(db.client);
  await buildOracle(db.client);
  ws = makeWorkspace('cli', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  ws.writeJob('order-daily-mart', orderMartJob());
});

afterAll(async () => {
  await db?.drop();
});

const range = ['--from', '2026-05-01', '--to', '2026-05-11'];

describe('dry run', () => {
  it('shows source and target per partition and writes nothing', async () => {
    const before = await martMd5(db.client, '2026-05-01', '2026-05-11');
    const r = await runCli(ws, ['order-daily-mart', ...range, '--run-id', 'bf-dry', '--dry-run']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('10 daily partitions, 2026-05-01 to 2026-05-10 inclusive');
    expect(r.stdout).toContain('Automation tier: manual');
    expect(r.stdout).toMatch(/2026-05-01\s+\d+/);
    expect(r.stdout).toContain('Nothing was written to the target.');
    expect(await martMd5(db.client, '2026-05-01', '2026-05-11')).toBe(before);
    // Each partition's source row count is the number of (day, customer) groups.
    const json = await runCli(ws, ['order-daily-mart', ...range, '--run-id', 'bf-dry', '--dry-run', '--json']);
    const dry = json.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; partitions?: { partition: { key: string }; source: { rows: string } }[] });
    const partitions = dry.find((l) => l.type === 'dry-run')?.partitions ?? [];
    expect(partitions.map((p) => p.partition.key)).toEqual([
      '2026-05-01',
      '2026-05-02',
      '2026-05-03',
      '2026-05-04',
      '2026-05-05',
      '2026-05-06',
      '2026-05-07',
      '2026-05-08',
      '2026-05-09',
      '2026-05-10',
    ]);
    const expected = await db.client.query<{ n: string }>(
      `select count(distinct customer_id)::text as n from orders where paid_at >= '2026-05-01' and paid_at < '2026-05-02'`,
    );
    expect(String(partitions[0]?.source.rows)).toBe(expected.rows[0]?.n);
  });

  it('is refused nothing but a manual-tier run without a dry run is refused (exit 4)', async () => {
    const r = await runCli(ws, ['order-daily-mart', '--from', '2026-06-01', '--to', '2026-06-03', '--run-id', 'bf-nodry']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('no dry run on record');
    const sqlite = new Database(ws.db, { readonly: true });
    expect(sqlite.prepare(`select count(*) as n from runs where run_id = 'bf-nodry'`).get()).toEqual({ n: 0 });
    sqlite.close();
  });
});

describe('execution', () => {
  it('recomputes every partition, reconciles, and records it all', async () => {
    // No canary: this test follows one uninterrupted run (test/integration/canary.test.ts has the canary).
    await runCli(ws, ['order-daily-mart', ...range, '--run-id', 'bf-run-1', '--sleep-ms', '10', '--canary', '0', '--dry-run']);
    await signOff(ws, 'bf-run-1'); // manual tier (billing): four eyes
    const r = await runCli(ws, ['order-daily-mart', ...range, '--run-id', 'bf-run-1', '--sleep-ms', '10', '--canary', '0']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Reconciliation: 10 partition(s) agree');
    expect(r.stdout).toMatch(/Run bf-run-1 succeeded: 10 published, 0 failed, 0 pending/);
    for (const day of ['2026-05-01', '2026-05-05', '2026-05-10']) {
      expect(await martMd5(db.client, day, nextDay(day))).toBe(await martMd5(db.client, day, nextDay(day), 'oracle.mart_order_daily'));
    }
    const marks = await db.client.query<{ n: string }>(
      `select count(*)::text as n from backfill_runbook.partition_marks where run_id = 'bf-run-1'`,
    );
    expect(marks.rows[0]?.n).toBe('10');
    const status = await runCli(ws, ['status', '--run-id', 'bf-run-1']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('Run bf-run-1  [succeeded]');
    expect(status.stdout).toContain('10/10 published');
    const sqlite = new Database(ws.db, { readonly: true });
    const events = sqlite
      .prepare(`select event, count(*) as n from audit_log where run_id = 'bf-run-1' group by event order by event`)
      .all();
    sqlite.close();
    expect(events).toEqual(
      expect.arrayContaining([
        { event: 'partition.running', n: 10 },
        { event: 'partition.validated', n: 10 },
        { event: 'partition.published', n: 10 },
      ]),
    );
  });

  it('refuses to start a run id twice and points at --resume', async () => {
    const r = await runCli(ws, ['order-daily-mart', ...range, '--run-id', 'bf-run-1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('run "bf-run-1" already exists (status succeeded): add --resume');
  });

  it('fixes a corrupted partition and leaves the rest exactly as the oracle', async () => {
    await db.client.query(`update mart.mart_order_daily set paid_amount = paid_amount * 2 where order_date = '2026-05-03'`);
    await db.client.query(`insert into mart.mart_order_daily values ('2026-05-03', 999999, 1, 1.00)`);
    expect(await martMd5(db.client, '2026-05-03', '2026-05-04')).not.toBe(
      await martMd5(db.client, '2026-05-03', '2026-05-04', 'oracle.mart_order_daily'),
    );
    // The same job version published these partitions (bf-run-1): the dry run says "fix the code
    // first" and, manual tier, blocks — until the plan says why this rerun is not about the code.
    const rerun = ['order-daily-mart', ...range, '--run-id', 'bf-run-2', '--canary', '0'];
    const blocked = await runCli(ws, [...rerun, '--dry-run']);
    expect(blocked.code).toBe(4);
    expect(blocked.stdout).toContain('same-code: 10 partition(s) were published by this very job version');
    const acknowledged = [...rerun, '--acknowledge', 'same-code:a partition was edited by hand; the code is right'];
    expect((await runCli(ws, [...acknowledged, '--dry-run'])).code).toBe(0);
    await signOff(ws, 'bf-run-2');
    const r = await runCli(ws, acknowledged);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(await martMd5(db.client, '2026-05-01', '2026-05-11')).toBe(
      await martMd5(db.client, '2026-05-01', '2026-05-11', 'oracle.mart_order_daily'),
    );
  });
});

describe('idempotency: the same range three times leaves the target byte for byte the same', () => {
  for (const mode of ['overwrite-partition', 'upsert', 'append-dedupe'] as const) {
    it(mode, async () => {
      const table = `mart.idem_${mode.replace('-', '_')}`;
      await db.client.query(`create table ${table} (like mart.mart_order_daily including all)`);
      const job = `idem-${mode}`;
      ws.writeJob(job, orderMartJob({ name: job, table, mode, billing: false }));
      const hashes: string[] = [];
      for (let i = 1; i <= 3; i++) {
        const args = [job, '--from', '2026-06-01', '--to', '2026-06-08', '--run-id', `bf-${mode}-${i}`];
        const r = await runCli(ws, args);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        hashes.push(await orderedPartitionMd5(db.client, table, 'order_date', '2026-06-01', '2026-06-08'));
      }
      expect(new Set(hashes).size).toBe(1);
      expect(hashes[0]).toBe(await orderedPartitionMd5(db.client, 'oracle.mart_order_daily', 'order_date', '2026-06-01', '2026-06-08'));
      const stats = await martStats(db.client, table);
      expect(stats.duplicates).toBe(0);
    });
  }
});

function nextDay(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}
