/**
 * Proving a job idempotent on real data: two writes in a rolled-back transaction, checksums
 * compared, the target untouched, the proof kept — and the only way to the `auto` tier.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, pgConfig, runCli, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;

const job = (name: string, ordersExpr = 'count(*)::bigint'): string => `name: ${name}
unit: day
source:
  connection: warehouse
  query: |
    select cast(paid_at as date) as order_date, customer_id, ${ordersExpr} as orders, sum(paid_amount) as paid_amount
    from orders where paid_at >= :partition_start and paid_at < :partition_end group by 1, 2
target: { connection: warehouse, table: mart.mart_order_daily, partition_column: order_date, key: [order_date, customer_id] }
write_mode: overwrite-partition
validation:
  - name: orders reconcile
    source: select count(*) as rows from orders where paid_at >= :partition_start and paid_at < :partition_end
    target: select count(*) as rows from mart.mart_order_daily where order_date >= '1900-01-01' and false
`;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'proof');
  await seedWarehouse(db.client);
  ws = makeWorkspace('proof', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  ws.writeJob('orders', job('orders'));
  ws.writeJob('jittery', job('jittery', '(count(*) + floor(random() * 3))::bigint'));
});

afterAll(async () => {
  await db?.drop();
});

async function targetMd5(): Promise<string> {
  const r = await db.client.query<{ h: string }>(
    `select md5(string_agg(t::text, ',' order by t::text)) as h from mart.mart_order_daily t where order_date = '2026-05-01'`,
  );
  return r.rows[0]?.h ?? '';
}

describe('run-backfill prove', () => {
  it('proves an idempotent job, leaves the target untouched, and unlocks the auto tier', async () => {
    const plan = ['orders', '--from', '2026-05-01', '--to', '2026-05-04', '--dry-run'];
    expect((await runCli(ws, plan)).stdout).toContain('Automation tier: semi-auto (idempotency not proven on record)');
    await db.client.query(`update mart.mart_order_daily set orders = orders + 7 where order_date = '2026-05-01'`);
    const before = await targetMd5();
    const r = await runCli(ws, ['prove', 'orders', '--partition', '2026-05-01']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^Idempotent: orders \(overwrite-partition\) on 2026-05-01 — the second write left the partition identical \(md5:[0-9a-f]{32}, \d+ then \d+ rows\)/m,
    );
    expect(await targetMd5()).toBe(before); // rolled back: still the corrupted rows
    expect((await runCli(ws, plan)).stdout).toContain('Automation tier: auto');
  });

  it('catches a job that is not idempotent (exit 1)', async () => {
    const r = await runCli(ws, ['prove', 'jittery', '--partition', '2026-05-02']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /NOT idempotent: jittery \(overwrite-partition\) on 2026-05-02 — checksum md5:[0-9a-f]{32} after one write, md5:[0-9a-f]{32} after two/,
    );
    expect((await runCli(ws, ['jittery', '--from', '2026-05-01', '--to', '2026-05-02', '--dry-run'])).stdout).toContain(
      'Automation tier: semi-auto',
    );
  });

  it('says which partition key it expected', async () => {
    const r = await runCli(ws, ['prove', 'orders', '--partition', 'yesterday']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--partition "yesterday" is not a partition key like 2026-05-01 (day)');
  });
});
