/**
 * Stop conditions, throttling and operator stops on a real PostgreSQL: each halt leaves a
 * resumable run (exit 3), says which condition fired with its measured value, publishes no
 * partial partition, and the run completes on resume.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { adminClient, createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, pgConfig, runCli, startCli, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;

const job = (name: string, sleepS = 0): string => `name: ${name}
unit: day
timezone: UTC
source:
  connection: warehouse
  query: |
    select cast(paid_at as date) as order_date, customer_id,
           count(*)::bigint as orders, sum(paid_amount) as paid_amount
    from orders${sleepS ? ` cross join (select pg_sleep(${sleepS})) as pause` : ''}
    where paid_at >= :partition_start and paid_at < :partition_end
    group by 1, 2
target:
  connection: warehouse
  table: mart.mart_order_daily
  partition_column: order_date
  key: [order_date, customer_id]
write_mode: overwrite-partition
validation:
  - name: orders reconcile
    source: select count(*) as rows from orders where paid_at >= :partition_start and paid_at < :partition_end
    target: select coalesce(sum(orders), 0) as rows from mart.mart_order_daily where order_date >= :partition_start and order_date < :partition_end
`;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'stops');
  await seedWarehouse(db.client);
  ws = makeWorkspace('stops', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  ws.writeJob('orders', job('orders'));
  ws.writeJob('slow-orders', job('slow-orders', 0.6));
  ws.writeJob('slower-orders', job('slower-orders', 3));
});

afterAll(async () => {
  await db?.drop();
});

function ledger(runId: string): Record<string, number> {
  const sqlite = new Database(ws.db, { readonly: true });
  const rows = sqlite.prepare(`select status, count(*) as n from partitions where run_id = ? group by status`).all(runId) as {
    status: string;
    n: number;
  }[];
  sqlite.close();
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

function runStatus(runId: string): { status: string; halt_reason: string | null } {
  const sqlite = new Database(ws.db, { readonly: true });
  const row = sqlite.prepare(`select status, halt_reason from runs where run_id = ?`).get(runId) as {
    status: string;
    halt_reason: string | null;
  };
  sqlite.close();
  return row;
}

async function partitionSum(day: string): Promise<string> {
  const r = await db.client.query<{ s: string }>(
    `select coalesce(sum(orders), 0)::text as s from mart.mart_order_daily where order_date = $1`,
    [day],
  );
  return r.rows[0]?.s ?? '';
}

/** Resolves when the CLI's output first contains `text`. */
function waitForOutput(child: ReturnType<typeof startCli>['child'], text: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = '';
    child.stdout?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(text)) resolve();
    });
  });
}

describe('stop conditions', () => {
  it('a no-run window halts before the first partition', async () => {
    const now = new Date();
    const hh = (h: number): string => String((h + 24) % 24).padStart(2, '0');
    const window = `${hh(now.getUTCHours() - 1)}:00-${hh(now.getUTCHours() + 1)}:59`;
    const r = await runCli(ws, ['orders', '--from', '2026-05-01', '--to', '2026-05-04', '--run-id', 'win-1', '--no-run-window', window]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toMatch(/no-run window: it is \d\d:\d\d UTC, backfills must not run between/);
    expect(ledger('win-1')).toEqual({ pending: 3 });
    expect(runStatus('win-1').status).toBe('halted');
  });

  it('a panic file stops at once: the partition in flight rolls back; resume completes', async () => {
    const panic = join(ws.dir, 'PANIC');
    const before = await partitionSum('2026-05-02');
    await db.client.query(`update mart.mart_order_daily set orders = orders + 1000 where order_date = '2026-05-02'`);
    const corrupted = await partitionSum('2026-05-02');
    // Three seconds per partition: the panic file appears while partition 2 is being written,
    // and the monitor (every second) must roll that partition back.
    const { child, done } = startCli(ws, [
      'slower-orders',
      '--from',
      '2026-05-01',
      '--to',
      '2026-05-05',
      '--run-id',
      'panic-1',
      '--panic-file',
      panic,
    ]);
    await waitForOutput(child, '2026-05-01: published');
    await new Promise((res) => setTimeout(res, 300));
    writeFileSync(panic, 'stop\n');
    const stoppedAt = Date.now();
    const r = await done;
    const haltMs = Date.now() - stoppedAt;
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain(`panic file ${panic} is present: stopping at once`);
    expect(ledger('panic-1')).toEqual({ published: 1, pending: 3 });
    expect(await partitionSum('2026-05-02')).toBe(corrupted); // rolled back: still the old rows
    rmSync(panic);
    const resumed = await runCli(ws, ['--resume', '--run-id', 'panic-1']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await partitionSum('2026-05-02')).toBe(before);
    console.info(`panic file: halted ${haltMs} ms after the file appeared`);
  });

  it('actual rows far from the dry run halt before the commit of that partition', async () => {
    const args = ['orders', '--from', '2026-06-01', '--to', '2026-06-05', '--run-id', 'diff-1', '--max-row-diff-ratio', '0.1'];
    expect((await runCli(ws, [...args, '--dry-run'])).code).toBe(0);
    // The source changes between the dry run and the run: 2026-06-03 gains 60 % more customers.
    await db.client.query(
      `insert into orders select 900000000 + g, 100000 + g, timestamptz '2026-06-03 12:00:00+00', 10.00, 'paid' from generate_series(1, 250) g`,
    );
    const before = await partitionSum('2026-06-03');
    const r = await runCli(ws, args);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toMatch(
      /row difference: partition 2026-06-03 wrote \d+ rows but the dry run expected \d+ \(diff ratio 0\.\d+ > 0\.1\)/,
    );
    expect(ledger('diff-1')).toEqual({ published: 2, pending: 2 });
    expect(await partitionSum('2026-06-03')).toBe(before);
    await db.client.query(`delete from orders where order_id > 900000000`);
  });

  it('a reader holding a lock: lock_timeout fires, it retries, then halts with "lock wait"; readers are never blocked', async () => {
    const holder: pg.Client = await adminClient(inject('pgA'), db.name);
    const reader: pg.Client = await adminClient(inject('pgA'), db.name);
    await holder.query('begin');
    await holder.query('lock table mart.mart_order_daily in share mode');
    const { done } = startCli(ws, [
      'orders',
      '--from',
      '2026-05-10',
      '--to',
      '2026-05-12',
      '--run-id',
      'lock-1',
      '--max-lock-wait-ms',
      '200',
    ]);
    // While the executor waits for its lock, plain readers still read.
    await reader.query(`set statement_timeout = 1000`);
    for (let i = 0; i < 5; i++) {
      const r = await reader.query(`select count(*) from mart.mart_order_daily`);
      expect(r.rowCount).toBe(1);
      await new Promise((res) => setTimeout(res, 200));
    }
    const r = await done;
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toMatch(
      /lock wait: partition 2026-05-10 could not lock mart\.mart_order_daily on warehouse within lock_timeout after \d attempt\(s\)/,
    );
    expect(ledger('lock-1')).toEqual({ pending: 2 });
    await holder.query('commit');
    const resumed = await runCli(ws, ['--resume', '--run-id', 'lock-1']);
    expect(resumed.code, resumed.stderr).toBe(0);
    await Promise.all([holder.end(), reader.end()]);
  });

  it("a session queued behind the backfill's locks over the critical level: the run halts at once and it gets its lock", async () => {
    const ddl: pg.Client = await adminClient(inject('pgA'), db.name);
    const { child, done } = startCli(ws, [
      'slower-orders',
      '--from',
      '2026-05-20',
      '--to',
      '2026-05-23',
      '--run-id',
      'waiters-1',
      '--critical-lock-wait-ms',
      '300',
    ]);
    await waitForOutput(child, 'Starting run');
    await new Promise((res) => setTimeout(res, 300)); // inside the first partition's transaction
    const started = Date.now();
    await ddl.query(`set lock_timeout = 10000`);
    await ddl.query('begin');
    await ddl.query('lock table mart.mart_order_daily in access exclusive mode'); // a migration, say
    const waited = Date.now() - started;
    await ddl.query('rollback');
    const r = await done;
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toMatch(/critical level: lock wait behind the backfill's locks: \d+ ms > 300 ms \(critical\)/);
    expect(ledger('waiters-1')).toEqual({ pending: 3 }); // the partition in flight rolled back
    console.info(`lock waiters (critical): the queued session got its lock after ${waited} ms`);
    await ddl.end();
  });

  it("a session queued behind the backfill's locks over the throttle level: the partition finishes, the run waits, then goes on by itself", async () => {
    const ddl: pg.Client = await adminClient(inject('pgA'), db.name);
    const { child, done } = startCli(ws, [
      'slower-orders',
      '--from',
      '2026-05-24',
      '--to',
      '2026-05-27',
      '--run-id',
      'waiters-2',
      '--max-lock-wait-ms',
      '300',
      '--json',
    ]);
    await waitForOutput(child, '"type":"run-started"');
    await new Promise((res) => setTimeout(res, 300)); // inside the first partition's transaction
    await ddl.query(`set lock_timeout = 20000`);
    await ddl.query('begin');
    await ddl.query('lock table mart.mart_order_daily in access exclusive mode'); // granted once the partition commits
    await ddl.query('rollback');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(ledger('waiters-2')).toEqual({ published: 3 });
    // The partition in flight finished (nothing rolled back and redone): each written once.
    const attempts = new Database(ws.db, { readonly: true });
    const tries = attempts.prepare(`select max(attempt) as n from partitions where run_id = 'waiters-2'`).get() as { n: number };
    attempts.close();
    expect(tries.n).toBe(1);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; reason?: string; outcome?: string });
    const throttled = events.find((e) => e.type === 'throttled');
    expect(throttled?.reason).toMatch(/^lock wait behind the backfill's locks: \d+ ms > 300 ms$/);
    expect(events.find((e) => e.type === 'throttle-ended')?.outcome).toBe('resumed');
    // the episode is in the ledger, start and end, and in the run's metrics
    const sqlite = new Database(ws.db, { readonly: true });
    const audit = sqlite
      .prepare(`select event from audit_log where run_id = 'waiters-2' and event like 'run.throttle%' order by seq`)
      .all() as { event: string }[];
    sqlite.close();
    expect(audit.map((a) => a.event)).toEqual(['run.throttled', 'run.throttle-ended']);
    const status = await runCli(ws, ['status', '--run-id', 'waiters-2']);
    expect(status.stdout).toMatch(/throttled 1 time\(s\), \d+\.\d s/);
    expect(status.stdout).toMatch(/Throttle episodes:[\s\S]*resumed[\s\S]*lock wait behind the backfill's locks: \d+ ms > 300 ms/);
    await ddl.end();
  });
});

describe('operators', () => {
  it('retunes a running backfill without restarting it', async () => {
    const { child, done } = startCli(ws, [
      'orders',
      '--from',
      '2026-07-01',
      '--to',
      '2026-07-09',
      '--run-id',
      'tune-1',
      '--sleep-ms',
      '5000',
    ]);
    await waitForOutput(child, '2026-07-01: published');
    const started = Date.now();
    const tuned = await runCli(ws, ['tune', '--run-id', 'tune-1', '--sleep-ms', '0', '--concurrency', '2']);
    expect(tuned.code, tuned.stderr).toBe(0);
    expect(tuned.stdout).toContain('Run tune-1 (running): 0 ms between partitions, concurrency 2');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    // Without the retune the remaining 7 partitions would have taken 6 × 5 s more.
    console.info(`tune: the 7 partitions after the retune took ${Date.now() - started} ms (30,000+ ms at the old throttle)`);
    expect(r.stdout).toContain('Retuned: concurrency 2, 0 ms between partitions');
    expect(ledger('tune-1')).toEqual({ published: 8 });
  });

  it('Ctrl-C finishes the partition in flight and leaves a resumable run; twice rolls it back', async () => {
    // Three seconds per partition, so each Ctrl-C lands inside a partition however busy the machine.
    const once = startCli(ws, ['slower-orders', '--from', '2026-07-10', '--to', '2026-07-14', '--run-id', 'int-1']);
    await waitForOutput(once.child, 'Starting run');
    await new Promise((res) => setTimeout(res, 200));
    once.child.kill('SIGINT');
    const r1 = await once.done;
    expect(r1.code, r1.stderr).toBe(3);
    expect(r1.stdout).toContain('interrupted (Ctrl-C): finishing the partition in flight');
    expect(ledger('int-1')).toEqual({ published: 1, pending: 3 });
    expect(runStatus('int-1').status).toBe('paused');

    const twice = startCli(ws, ['--resume', '--run-id', 'int-1']);
    await waitForOutput(twice.child, 'Resuming run');
    await new Promise((res) => setTimeout(res, 200));
    twice.child.kill('SIGINT');
    await new Promise((res) => setTimeout(res, 50));
    twice.child.kill('SIGINT');
    const r2 = await twice.done;
    expect(r2.code, r2.stderr).toBe(3);
    expect(ledger('int-1')).toEqual({ published: 1, pending: 3 });
    const r3 = await runCli(ws, ['--resume', '--run-id', 'int-1']);
    expect(r3.code, r3.stderr).toBe(0);
    expect(ledger('int-1')).toEqual({ published: 4 });
    expect(existsSync(ws.db)).toBe(true);
    // The run's metrics afterwards: two operator stops, a clean reconciliation.
    const status = await runCli(ws, ['status', '--run-id', 'int-1']);
    expect(status.stdout).toMatch(
      /metrics: [\d,]+ rows\/min over [\d.]+ s active · checkpoint age \d+ s · stops 2 · duplicate keys 0 · validation diff ratio 0\.000000/,
    );
  });
});
