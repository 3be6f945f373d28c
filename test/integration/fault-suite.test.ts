/**
 * The fault suite on real servers: two executors on one run, a paused (SIGSTOP) holder that
 * wakes late, the local SQLite on a full disk, and a connection cut mid-INSERT and mid-COPY.
 * Every case ends with the target equal to the oracle after resume, and no partition published
 * twice.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { createTestDatabase } from '../support/pg.ts';
import { startPgProxy, type PgProxy } from '../support/pgProxy.ts';
import { makeWorkspace, pgConfig, runCli, startCli, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let remote: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;
let proxy: PgProxy;
let proxyA: PgProxy;

const job = (name: string, opts: { sleepS?: number; target?: string; source?: string } = {}): string => `name: ${name}
unit: day
source:
  connection: ${opts.source ?? 'warehouse'}
  query: |
    select cast(paid_at as date) as order_date, customer_id, count(*)::bigint as orders, sum(paid_amount) as paid_amount
    from orders${opts.sleepS ? ` cross join (select pg_sleep(${opts.sleepS})) as pause` : ''}
    where paid_at >= :partition_start and paid_at < :partition_end group by 1, 2
target: { connection: ${opts.target ?? 'warehouse'}, table: mart.mart_order_daily, partition_column: order_date, key: [order_date, customer_id] }
write_mode: overwrite-partition
validation:
  - name: orders reconcile
    source: select count(*) as rows, sum(paid_amount) as amount from orders where paid_at >= :partition_start and paid_at < :partition_end
    target: select coalesce(sum(orders), 0) as rows, sum(paid_amount) as amount from mart.mart_order_daily where order_date >= :partition_start and order_date < :partition_end
`;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'faults');
  await seedWarehouse(db.client);
  // The same mart on the second server, reached through a cutting proxy (cross-server COPY path).
  remote = await createTestDatabase(inject('pgB'), 'faults_remote');
  await remote.client.query(
    `create schema mart; create table mart.mart_order_daily (order_date date, customer_id int, orders bigint, paid_amount numeric(14,2), primary key (order_date, customer_id))`,
  );
  proxy = await startPgProxy(inject('pgB').port);
  proxyA = await startPgProxy(inject('pgA').port);
  ws = makeWorkspace('faults', { WAREHOUSE_PASSWORD: db.password, REMOTE_PASSWORD: remote.password });
  const viaProxy = remote.url.replace(`:${inject('pgB').port}/`, `:${proxy.port}/`);
  const warehouseViaProxy = db.url.replace(`:${inject('pgA').port}/`, `:${proxyA.port}/`);
  ws.writeConfig(
    pgConfig({
      warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' },
      cutwarehouse: { url: warehouseViaProxy, passwordEnv: 'WAREHOUSE_PASSWORD' },
      remote: { url: viaProxy, passwordEnv: 'REMOTE_PASSWORD' },
    }),
  );
  ws.writeJob('cut-orders', job('cut-orders', { source: 'cutwarehouse', target: 'cutwarehouse' }));
  ws.writeJob('orders', job('orders'));
  ws.writeJob('slow-orders', job('slow-orders', { sleepS: 2 }));
  ws.writeJob('remote-orders', job('remote-orders', { target: 'remote' }));
});

afterAll(async () => {
  await proxy?.close();
  await proxyA?.close();
  await remote?.drop();
  await db?.drop();
});

function ledger(runId: string, file = ws.db): Record<string, number> {
  const sqlite = new Database(file, { readonly: true });
  const rows = sqlite.prepare(`select status, count(*) as n from partitions where run_id = ? group by status`).all(runId) as {
    status: string;
    n: number;
  }[];
  sqlite.close();
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

async function matchesOracle(client: typeof db.client, from: string, to: string): Promise<boolean> {
  const source = await db.client.query<{ h: string }>(
    `select md5(string_agg(t::text, ',' order by t::text)) as h from (select cast(paid_at as date) as order_date, customer_id, count(*)::bigint as orders, sum(paid_amount)::numeric(14,2) as paid_amount from orders where paid_at >= $1 and paid_at < $2 group by 1, 2) t`,
    [from, to],
  );
  const target = await client.query<{ h: string }>(
    `select md5(string_agg(t::text, ',' order by t::text)) as h from mart.mart_order_daily t where order_date >= $1 and order_date < $2`,
    [from, to],
  );
  return source.rows[0]?.h === target.rows[0]?.h;
}

/** Resolves when the CLI's output first contains `text`; fails if the CLI exits first. */
function waitForOutput(child: ReturnType<typeof startCli>['child'], text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(text)) resolve();
    });
    child.stderr?.on('data', (d: Buffer) => (seen += d.toString()));
    child.on('exit', () => reject(new Error(`the CLI exited before printing "${text}":\n${seen}`)));
  });
}

describe('two executors on the same run', () => {
  it('exactly one proceeds; the other is refused (exit 4)', async () => {
    const a = startCli(ws, ['slow-orders', '--from', '2026-05-01', '--to', '2026-05-03', '--run-id', 'two-1']);
    await waitForOutput(a.child, 'Starting run');
    const b = await runCli(ws, ['--resume', '--run-id', 'two-1']);
    expect(b.code).toBe(4);
    expect(b.stderr).toMatch(/run "two-1" is being executed by another process \(.+:\d+:[0-9a-f]+\); only one executor may drive a run/);
    const ra = await a.done;
    expect(ra.code, ra.stderr).toBe(0);
    expect(ledger('two-1')).toEqual({ published: 2 });
  });

  it('a paused (SIGSTOP) holder that wakes up after losing its lease cannot publish', async () => {
    const env = { BACKFILL_RUNBOOK_LEASE_MS: '1500' };
    const lease = { ...ws, env: { ...ws.env, ...env } };
    const a = startCli(lease, ['slow-orders', '--from', '2026-05-05', '--to', '2026-05-07', '--run-id', 'stop-1']);
    await waitForOutput(a.child, 'Starting run');
    await new Promise((r) => setTimeout(r, 300)); // inside partition 1's transaction
    a.child.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 2500)); // the lease expires
    // B takes the expired lease; partition 1 is still locked by A's open transaction.
    const bRun = startCli(lease, ['--resume', '--run-id', 'stop-1']);
    const bTimer = setTimeout(() => bRun.child.kill('SIGKILL'), 15000);
    const b = await bRun.done;
    clearTimeout(bTimer);
    expect(b.code, b.stdout + b.stderr).toBe(3);
    expect(b.stdout).toContain('partition 2026-05-05 of mart.mart_order_daily is being written by another run');
    a.child.kill('SIGCONT');
    const aTimer = setTimeout(() => a.child.kill('SIGKILL'), 15000);
    const ra = await a.done;
    clearTimeout(aTimer);
    expect(ra.code, ra.stdout + ra.stderr).toBe(3);
    expect(ra.stdout).toContain('the run lease was taken over by another executor');
    // Nobody published partition 1 in the meantime; a final resume does, once.
    expect(ledger('stop-1').published ?? 0).toBe(0);
    const marks = await db.client.query(`select count(*)::int as n from backfill_runbook.partition_marks where run_id = 'stop-1'`);
    expect(marks.rows[0]).toEqual({ n: 0 });
    const c = await runCli(lease, ['--resume', '--run-id', 'stop-1']);
    expect(c.code, c.stderr).toBe(0);
    expect(ledger('stop-1')).toEqual({ published: 2 });
    expect(await matchesOracle(db.client, '2026-05-05', '2026-05-07')).toBe(true);
  });
});

describe('the local SQLite on a full disk', () => {
  const mount = join(ws?.dir ?? '/tmp', 'tiny');
  const canMount = process.getuid?.() === 0;

  it.runIf(canMount)('halts before the next target write with a clear message, and resumes once space is back', async () => {
    const dir = join(ws.dir, 'tiny');
    mkdirSync(dir, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dir]);
    try {
      const dbFile = join(dir, 'ledger.sqlite');
      const args = ['orders', '--from', '2026-06-01', '--to', '2026-06-21', '--run-id', 'full-1', '--db', dbFile, '--sleep-ms', '700'];
      const a = startCli(ws, args);
      await waitForOutput(a.child, '2026-06-02: published');
      // Fill every byte that is left.
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${join(dir, 'filler')}`, 'bs=4k'], { stdio: 'ignore' });
      } catch {
        // dd stops with "No space left on device": that is the point
      }
      const killer = setTimeout(() => a.child.kill('SIGKILL'), 20_000);
      const r = await a.done;
      clearTimeout(killer);
      expect(r.code, r.stdout + r.stderr).toBe(3);
      expect(r.stdout).toMatch(/the local store failed: .*(full|space)/i);
      rmSync(join(dir, 'filler'));
      const published = ledger('full-1', dbFile).published ?? 0;
      expect(published).toBeGreaterThanOrEqual(2);
      expect(published).toBeLessThan(20);
      const resumed = await runCli(ws, ['--resume', '--run-id', 'full-1', '--db', dbFile]);
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(ledger('full-1', dbFile)).toEqual({ published: 20 });
      expect(await matchesOracle(db.client, '2026-06-01', '2026-06-21')).toBe(true);
      console.info(`full disk: halted after ${published} of 20 partitions; resumed to 20`);
    } finally {
      execFileSync('umount', [dir]);
    }
  });
  it.skipIf(canMount)('needs root to mount a tiny tmpfs (skipped: not root)', () => {
    expect(mount).toBeTruthy();
  });
});

describe('a connection cut in the middle', () => {
  const cases = [
    {
      name: 'mid-INSERT (same-database pushdown)',
      job: 'cut-orders',
      match: /^INSERT INTO "mart"/,
      client: () => db.client,
      from: '2026-07-01',
      to: '2026-07-05',
    },
    {
      name: 'mid-COPY (cross-server)',
      job: 'remote-orders',
      match: /^COPY .* FROM STDIN/,
      client: () => remote.client,
      from: '2026-07-01',
      to: '2026-07-05',
    },
    {
      name: 'right after COMMIT (cross-server)',
      job: 'remote-orders',
      match: /^COMMIT/,
      client: () => remote.client,
      from: '2026-07-05',
      to: '2026-07-09',
    },
  ];
  for (const c of cases) {
    it(`${c.name}: no partial partition is ever visible; the run completes`, async () => {
      const via = c.job === 'cut-orders' ? proxyA : proxy;
      const firedBefore = via.fired();
      via.arm({ match: c.match, action: c.match.source.includes('COMMIT') ? 'cut-after-server-answers' : 'cut-while-running', skip: 1 });
      const runId = `cut-${c.job}-${c.from}`;
      const r = await runCli(ws, [c.job, '--from', c.from, '--to', c.to, '--run-id', runId]);
      expect(via.fired()).toBe(firedBefore + 1);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(ledger(runId)).toEqual({ published: 4 });
      expect(await matchesOracle(c.client(), c.from, c.to)).toBe(true);
      const marks = await c
        .client()
        .query<{ n: number }>(`select count(*)::int as n from backfill_runbook.partition_marks where run_id = $1`, [runId]);
      expect(marks.rows[0]?.n).toBe(4);
    });
  }
});
