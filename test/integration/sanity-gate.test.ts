/**
 * The source sanity gate on real data: a healthy source passes; a contaminated one (nulls, a
 * dropped day, refunds before payments, a spike) stops the run before the first write (exit 4),
 * with the measured value and threshold in the message.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { SANDBOX_JOBS } from '../../electron/engine/sandbox/jobs.ts';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, pgConfig, runCli, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'sanity');
  await seedWarehouse(db.client);
  ws = makeWorkspace('sanity', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  for (const [name, text] of Object.entries(SANDBOX_JOBS)) ws.writeJob(name, text);
});

afterAll(async () => {
  await db?.drop();
});

const range = ['--from', '2026-05-01', '--to', '2026-05-15'];

async function martMd5(): Promise<string> {
  const r = await db.client.query<{ h: string }>(`select md5(string_agg(t::text, ',' order by t::text)) as h from mart.refund_daily t`);
  return r.rows[0]?.h ?? '';
}

describe('a healthy source', () => {
  it('passes every rule, each shown with its value and threshold', async () => {
    const r = await runCli(ws, ['check', 'refund-reason-daily', ...range]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ok\s+null_rate\(refunds\.reason_code\)\s+0\s+≤ 0/);
    expect(r.stdout).toMatch(/ok\s+timestamp_order\(refund_timeline: paid_at ≤ refunded_at\)\s+0\s+≤ 0 rows/);
    expect(r.stdout).toMatch(/row_count_outlier\(refunds\)/);
  });
});

describe('contaminated sources stop the gate before the first write (exit 4)', () => {
  let restore: string[] = [];
  beforeEach(async () => {
    for (const sql of restore) await db.client.query(sql);
    restore = [];
  });

  const cases = [
    {
      name: 'nulls in a required column',
      contaminate: [
        `alter table refunds alter column reason_code drop not null`,
        `update refunds set reason_code = null where refunded_at >= '2026-05-03' and refunded_at < '2026-05-04'`,
      ],
      undo: [`update refunds set reason_code = 'OTHER' where reason_code is null`],
      expect: /source sanity check null_rate\(refunds\.reason_code\) failed: \d+ of \d+ rows have no reason_code/,
      job: 'refund-reason-daily',
    },
    {
      name: 'refunds before their payment',
      contaminate: [
        `update orders set paid_at = paid_at + interval '30 days' where order_id in (select order_id from refunds where refunded_at >= '2026-05-05' and refunded_at < '2026-05-06' limit 3)`,
      ],
      undo: [
        `update orders set paid_at = paid_at - interval '30 days' where paid_at >= '2026-06-01' and order_id in (select order_id from refunds where refunded_at >= '2026-05-05' and refunded_at < '2026-05-06')`,
      ],
      expect:
        /source sanity check timestamp_order\(refund_timeline: paid_at ≤ refunded_at\) failed: 3 of \d+ rows have refunded_at before paid_at/,
      job: 'refund-reason-daily',
    },
    {
      name: 'a dropped day',
      contaminate: [
        `create table orders_dropped as select * from orders where paid_at >= '2026-05-09' and paid_at < '2026-05-10'`,
        `create table refunds_dropped as select * from refunds where order_id in (select order_id from orders_dropped)`,
        `delete from refunds where order_id in (select order_id from orders_dropped)`,
        `delete from orders where paid_at >= '2026-05-09' and paid_at < '2026-05-10'`,
      ],
      undo: [
        `insert into orders select * from orders_dropped`,
        `insert into refunds select * from refunds_dropped`,
        `drop table orders_dropped, refunds_dropped`,
      ],
      expect:
        /source sanity check row_count_outlier\(orders\) failed: 1 outlier partition\(s\): 2026-05-09: 0 rows vs median 400 \(×0\.00\)/,
      job: 'order-daily-mart',
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      for (const sql of c.contaminate) await db.client.query(sql);
      restore = c.undo;
      const before = await martMd5();
      // The dry run the manual tier wants on record. Its own questions may already refuse the run
      // (a day whose source rows vanished is "source no longer there", exit 4): kept either way.
      const dry = await runCli(ws, [c.job, ...range, '--dry-run']);
      expect(dry.stdout, dry.stderr).toContain('Dry run kept as evidence');
      const r = await runCli(ws, [c.job, ...range]);
      expect(r.code, r.stdout + r.stderr).toBe(4);
      expect(r.stderr).toMatch(c.expect);
      expect(r.stdout).toContain('Source sanity checks: BLOCKED');
      expect(await martMd5()).toBe(before);
      const check = await runCli(ws, ['check', c.job, ...range]);
      expect(check.code).toBe(4);
    });
  }
});
