/**
 * The source-purged case (issue 15): the source of three partitions is gone, so overwriting them
 * would delete rows the source can never give back. The run is refused in every tier; with the
 * plan's explicit acceptance it deletes exactly those three partitions, and says so on record.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RedFlag } from '../../shared/redFlags.ts';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { cliJson } from '../support/app.ts';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, orderMartJob, pgConfig, runCli, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;
const PURGED = ['2026-04-10', '2026-04-11', '2026-04-12'];
const RANGE = ['--from', '2026-04-08', '--to', '2026-04-15'];

/** md5 of the mart's rows per day, over the whole table. */
async function martByDay(): Promise<Map<string, string>> {
  const r = await db.client.query<{ d: string; h: string }>(
    `select to_char(order_date, 'YYYY-MM-DD') as d, md5(string_agg(t::text, ',' order by t::text)) as h from mart.mart_order_daily t group by 1`,
  );
  return new Map(r.rows.map((row) => [row.d, row.h]));
}

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'purged');
  await seedWarehouse(db.client);
  // The upstream purged three days of orders (and their refunds); the mart still holds them.
  const purged = `select order_id from orders where paid_at >= '2026-04-10' and paid_at < '2026-04-13'`;
  await db.client.query(`delete from refunds where order_id in (${purged})`);
  await db.client.query(`delete from orders where order_id in (${purged})`);
  ws = makeWorkspace('purged', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  ws.writeJob('orders-mart', orderMartJob({ name: 'orders-mart', billing: false }));
});

afterAll(async () => {
  await db?.drop();
});

describe('a target whose source lost three partitions', () => {
  it('is refused: the dry run names exactly the three, the run exits 4 and writes nothing', async () => {
    const before = await martByDay();
    const dry = await cliJson(ws, ['orders-mart', ...RANGE, '--run-id', 'purge-1', '--dry-run']);
    expect(dry.code).toBe(4);
    const flags = dry.of<{ redFlags: RedFlag[] }>('dry-run')?.redFlags ?? [];
    expect(flags.find((f) => f.code === 'source-gone')).toMatchObject({ severity: 'block', partitions: PURGED });
    expect(dry.stderr).toContain('The run would be refused: 1 red flag(s) block it (source-gone)');

    const run = await runCli(ws, ['orders-mart', ...RANGE, '--run-id', 'purge-1']);
    expect(run.code, run.stdout + run.stderr).toBe(4);
    expect(run.stderr).toContain("list them in the plan's accept_purged to delete them on purpose");
    expect(await martByDay()).toEqual(before);
    const sqlite = new Database(ws.db, { readonly: true });
    expect(sqlite.prepare(`select count(*) as n from runs where run_id = 'purge-1'`).get()).toEqual({ n: 0 });
    sqlite.close();
  });

  it('an acceptance naming a partition outside the range is a usage error naming the field (exit 2)', async () => {
    const r = await runCli(ws, ['orders-mart', ...RANGE, '--run-id', 'purge-x', '--accept-purged', '2026-04-10,2026-05-10', '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('accept_purged names partition 2026-05-10, which is not in the range');
  });

  it('with the plan accepting them, deletes exactly those three partitions and records it', async () => {
    const before = await martByDay();
    const accepted = ['orders-mart', ...RANGE, '--run-id', 'purge-2', '--accept-purged', PURGED.join(',')];
    const dry = await cliJson(ws, [...accepted, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    const gone = dry.of<{ redFlags: RedFlag[] }>('dry-run')?.redFlags.find((f) => f.code === 'source-gone');
    expect(gone).toMatchObject({ severity: 'warn', partitions: PURGED });
    expect(gone?.message).toContain("listed in the plan's accept_purged: its rows will be deleted");

    const run = await runCli(ws, accepted);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const after = await martByDay();
    for (const day of PURGED) expect(after.has(day), day).toBe(false);
    // Every other day of the table, inside the range and out, is exactly as it was.
    for (const [day, hash] of before) if (!PURGED.includes(day)) expect(after.get(day), day).toBe(hash);
    expect(after.size).toBe(before.size - 3);

    const sqlite = new Database(ws.db, { readonly: true });
    const evidence = sqlite.prepare(`select body_json from evidence where run_id = 'purge-2' and kind = 'accepted-flags'`).all() as {
      body_json: string;
    }[];
    const partitions = sqlite
      .prepare(`select partition_key as k, rows_written as n from partitions where run_id = 'purge-2' order by seq`)
      .all();
    sqlite.close();
    expect(evidence).toHaveLength(1);
    const body = JSON.parse(evidence[0]?.body_json ?? '{}') as { deleted: string[]; flags: { code: string; accepted: string }[] };
    expect(body.deleted).toEqual(PURGED);
    expect(body.flags.every((f) => f.code === 'source-gone' && f.accepted.includes('accept_purged'))).toBe(true);
    // The three are published empty: the delete is the write; the others wrote their rows.
    const written = new Map((partitions as { k: string; n: number }[]).map((p) => [p.k, p.n]));
    expect([...written.keys()]).toEqual(['2026-04-08', '2026-04-09', ...PURGED, '2026-04-13', '2026-04-14']);
    for (const day of PURGED) expect(written.get(day)).toBe(0);
    for (const day of ['2026-04-08', '2026-04-09', '2026-04-13', '2026-04-14']) expect(written.get(day)).toBeGreaterThan(300);
  });
});
