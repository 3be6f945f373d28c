/**
 * Hostile and broken input: each gets a clear message naming the file, field and value,
 * the documented exit code, and nothing written — not to the target, not to the ledger.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { createOrderMart, orderedPartitionMd5, seedOrders } from '../support/dataset.ts';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, orderMartJob, pgConfig, runCli, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'errors');
  await seedOrders(db.client, { from: '2026-05-01', days: 10, ordersPerDay: 50, seed: 3 });
  await createOrderMart(db.client);
  ws = makeWorkspace('errors', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  ws.writeJob('order-daily-mart', orderMartJob({ billing: false }));
});

afterAll(async () => {
  await db?.drop();
});

function runsInLedger(): number {
  if (!existsSync(ws.db)) return 0;
  const sqlite = new Database(ws.db, { readonly: true });
  const n = (sqlite.prepare('select count(*) as n from runs').get() as { n: number }).n;
  sqlite.close();
  return n;
}

const ok = ['--from', '2026-05-01', '--to', '2026-05-03'];

describe('bad input is refused with exit 2 and nothing written', () => {
  const cases: { name: string; setup?: () => void; args: string[]; code: number; message: RegExp }[] = [
    { name: 'unknown job', args: ['no-such-job', ...ok], code: 2, message: /no-such-job.*order-daily-mart/s },
    {
      name: '--from after --to',
      args: ['order-daily-mart', '--from', '2026-07-01', '--to', '2026-05-01'],
      code: 2,
      message: /2026-07-01.*2026-05-01/,
    },
    { name: 'impossible date', args: ['order-daily-mart', '--from', '2026-02-30', '--to', '2026-03-02'], code: 2, message: /2026-02-30/ },
    { name: 'missing --to', args: ['order-daily-mart', '--from', '2026-05-01'], code: 2, message: /--to is required/ },
    {
      name: 'unit contradicting the job',
      args: ['order-daily-mart', ...ok, '--unit', 'hour'],
      code: 2,
      message: /unit hour contradicts the job's unit day/,
    },
    { name: 'negative sleep', args: ['order-daily-mart', ...ok, '--sleep-ms', '-5'], code: 2, message: /sleep-ms.*-5/ },
    { name: 'unknown write mode', args: ['order-daily-mart', ...ok, '--mode', 'yolo'], code: 2, message: /yolo/ },
    { name: 'resume of an unknown run', args: ['--resume', '--run-id', 'nope'], code: 2, message: /no run "nope"/ },
    {
      name: 'malformed YAML',
      setup: () => ws.writeJob('broken', 'name: broken\nunit: day\nsource: [unclosed\n'),
      args: ['broken', ...ok],
      code: 2,
      message: /jobs\/broken\.yaml:\d+:\d+: YAML syntax error/,
    },
    {
      name: 'a wrong type in the job',
      setup: () =>
        ws.writeJob('wrongtype', orderMartJob({ name: 'wrongtype' }).replace('key: [order_date, customer_id]', 'key: [order_date, 42]')),
      args: ['wrongtype', ...ok],
      code: 2,
      message: /wrongtype\.yaml.*target\.key\[1\].*42/s,
    },
    {
      name: 'a hostile table name that does not exist',
      setup: () => ws.writeJob('hostile', orderMartJob({ name: 'hostile', table: 'mart.x; drop table orders; --', billing: false })),
      args: ['hostile', ...ok],
      code: 2,
      // The job's rule names the same table in its SQL; that SQL is refused first, before any server is asked.
      message: /target\.table.*drop table orders|validation\[0\]\.target: the SQL holds 2 statements; exactly one SELECT is allowed/s,
    },
    {
      name: 'a dead database',
      setup: () => {
        ws.writeFile(
          'dead.yaml',
          pgConfig({ warehouse: { url: 'postgres://postgres@127.0.0.1:1/postgres', passwordEnv: 'WAREHOUSE_PASSWORD' } }),
        );
      },
      args: ['order-daily-mart', ...ok, '--config', 'dead.yaml'],
      code: 2,
      message: /connection refused.*127\.0\.0\.1:1/s,
    },
    {
      name: 'a password written in the config',
      setup: () => {
        ws.writeFile(
          'pw.yaml',
          `connections:\n  warehouse:\n    kind: postgres\n    url: postgres://postgres:hunter2@127.0.0.1:5432/postgres\n`,
        );
      },
      args: ['order-daily-mart', ...ok, '--config', 'pw.yaml'],
      code: 2,
      message: /pw\.yaml.*password_env/s,
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      c.setup?.();
      const before = await orderedPartitionMd5(db.client, 'mart.mart_order_daily', 'order_date', '2026-05-01', '2026-05-11');
      const r = await runCli(ws, c.args);
      expect(r.code, r.stderr).toBe(c.code);
      expect(r.stderr).toMatch(c.message);
      expect(r.stderr).not.toContain('hunter2');
      expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
      expect(runsInLedger()).toBe(0);
      expect(await orderedPartitionMd5(db.client, 'mart.mart_order_daily', 'order_date', '2026-05-01', '2026-05-11')).toBe(before);
      const orders = await db.client.query(`select to_regclass('public.orders') as t`);
      expect(orders.rows[0]).toEqual({ t: 'orders' });
    });
  }
});

describe('hostile identifiers are quoted, never executed', () => {
  it('backfills into a table whose name holds quotes, a semicolon and a comment marker', async () => {
    await db.client.query(`create schema "odd ""schema"`);
    await db.client.query(`create table "odd ""schema"."t; drop table orders; --" (like mart.mart_order_daily including all)`);
    const table = `"odd ""schema"."t; drop table orders; --"`;
    ws.writeJob('weird', orderMartJob({ name: 'weird', table, billing: false }));
    const r = await runCli(ws, ['weird', '--from', '2026-05-01', '--to', '2026-05-04', '--run-id', 'weird-1']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = await db.client.query<{ n: string }>(`select count(*)::text as n from "odd ""schema"."t; drop table orders; --"`);
    expect(Number(rows.rows[0]?.n)).toBeGreaterThan(0);
    const orders = await db.client.query(`select to_regclass('public.orders') as t`);
    expect(orders.rows[0]).toEqual({ t: 'orders' });
  });
});
