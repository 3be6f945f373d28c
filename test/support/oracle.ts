/**
 * The expected state of the order mart, computed straight from the source with one plain
 * SQL statement — what every backfill of the mart must end up equal to.
 */
import type pg from 'pg';
import { orderedPartitionMd5 } from './dataset.ts';

export async function buildOracle(client: pg.Client): Promise<void> {
  await client.query(`create schema if not exists oracle`);
  await client.query(`create table oracle.mart_order_daily (like mart.mart_order_daily including all)`);
  await client.query(`set timezone = 'UTC'`);
  await client.query(`insert into oracle.mart_order_daily
    select cast(paid_at as date), customer_id, count(*)::bigint, sum(paid_amount) from orders group by 1, 2`);
}

export function martMd5(client: pg.Client, from: string, to: string, table = 'mart.mart_order_daily'): Promise<string> {
  return orderedPartitionMd5(client, table, 'order_date', from, to);
}

export async function martStats(client: pg.Client, table: string): Promise<{ rows: number; duplicates: number }> {
  const r = await client.query<{ rows: string; duplicates: string }>(
    `select (select count(*) from ${table})::text as rows,
            (select count(*) from (select 1 from ${table} group by order_date, customer_id having count(*) > 1) d)::text as duplicates`,
  );
  return { rows: Number(r.rows[0]?.rows), duplicates: Number(r.rows[0]?.duplicates) };
}
