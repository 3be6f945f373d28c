/**
 * The ambiguous commit (docs/design.md §6 step 5): COMMIT reached the server but its answer never
 * came back. The target's marker decides — the partition is neither redone nor lost.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import { createOrderMart, seedOrders } from '../support/dataset.ts';
import { createTestDatabase } from '../support/pg.ts';
import { startPgProxy, type PgProxy } from '../support/pgProxy.ts';
import { makeWorkspace, orderMartJob, pgConfig, runCli, type Workspace } from '../support/workspace.ts';
import { buildOracle, martMd5 } from '../support/oracle.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;
let proxy: PgProxy;

beforeAll(async () => {
  const server = inject('pgA');
  db = await createTestDatabase(server, 'ambiguous');
  await seedOrders(db.client, { from: '2026-05-01', days: 10, ordersPerDay: 80, seed: 11 });
  await createOrderMart(db.client);
  await buildOracle(db.client);
  proxy = await startPgProxy(server.port);
  ws = makeWorkspace('ambiguous', { WAREHOUSE_PASSWORD: db.password });
  const viaProxy = db.url.replace(`:${server.port}/`, `:${proxy.port}/`);
  ws.writeConfig(pgConfig({ warehouse: { url: viaProxy, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  ws.writeJob('order-daily-mart', orderMartJob({ billing: false }));
});

afterAll(async () => {
  await proxy?.close();
  await db?.drop();
});

function ledger(runId: string): { key: string; status: string; attempt: number }[] {
  const sqlite = new Database(ws.db, { readonly: true });
  const rows = sqlite.prepare(`select partition_key as key, status, attempt from partitions where run_id = ? order by seq`).all(runId) as {
    key: string;
    status: string;
    attempt: number;
  }[];
  sqlite.close();
  return rows;
}

describe('the connection dropped right after COMMIT', () => {
  it('is resolved in the run by the marker: published once, attempt 1, not redone', async () => {
    proxy.arm({ match: /^COMMIT/i, action: 'cut-after-server-answers', skip: 1 });
    const r = await runCli(ws, ['order-daily-mart', '--from', '2026-05-01', '--to', '2026-05-05', '--run-id', 'amb-1']);
    expect(proxy.fired()).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('2026-05-02: published (COMMIT reached the target before the connection dropped)');
    expect(ledger('amb-1')).toEqual([
      { key: '2026-05-01', status: 'published', attempt: 1 },
      { key: '2026-05-02', status: 'published', attempt: 1 },
      { key: '2026-05-03', status: 'published', attempt: 1 },
      { key: '2026-05-04', status: 'published', attempt: 1 },
    ]);
    expect(await martMd5(db.client, '2026-05-01', '2026-05-05')).toBe(
      await martMd5(db.client, '2026-05-01', '2026-05-05', 'oracle.mart_order_daily'),
    );
  });

  it('is resolved on resume when the process died before its checkpoint', async () => {
    const runId = 'amb-2';
    const r = await runCli(ws, ['order-daily-mart', '--from', '2026-05-05', '--to', '2026-05-08', '--run-id', runId]);
    expect(r.code).toBe(0);
    // What a SIGKILL between the target's COMMIT and the local checkpoint leaves behind.
    const sqlite = new Database(ws.db);
    sqlite
      .prepare(`update partitions set status = 'running', finished_at = null where run_id = ? and partition_key = '2026-05-06'`)
      .run(runId);
    sqlite.prepare(`update runs set status = 'running' where run_id = ?`).run(runId);
    sqlite.close();
    const resumed = await runCli(ws, ['--resume', '--run-id', runId]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('2026-05-06: published (committed before the interruption: marker found on the target)');
    expect(resumed.stdout).toContain('0 partition(s) to write');
    expect(ledger(runId).map((p) => [p.status, p.attempt])).toEqual([
      ['published', 1],
      ['published', 1],
      ['published', 1],
    ]);
  });

  it('when the target is gone as well, leaves the partition in flight and halts (exit 3); resume settles it', async () => {
    // Refuse new connections as soon as the COMMIT was cut, so the marker cannot be read.
    proxy.arm({ match: /^COMMIT/i, action: 'cut-after-server-answers', thenRefuse: true });
    const runId = 'amb-3';
    const r = await runCli(ws, ['order-daily-mart', '--from', '2026-05-08', '--to', '2026-05-10', '--run-id', runId]);
    proxy.refuse(false);
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stdout).toContain('decided on resume by the target');
    // In flight: validated in the ledger before COMMIT, outcome unknown until the marker is read.
    expect(ledger(runId)[0]).toEqual({ key: '2026-05-08', status: 'validated', attempt: 1 });
    const resumed = await runCli(ws, ['--resume', '--run-id', runId]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(ledger(runId)).toEqual([
      { key: '2026-05-08', status: 'published', attempt: 1 },
      { key: '2026-05-09', status: 'published', attempt: 1 },
    ]);
    expect(await martMd5(db.client, '2026-05-08', '2026-05-10')).toBe(
      await martMd5(db.client, '2026-05-08', '2026-05-10', 'oracle.mart_order_daily'),
    );
  });
});
