// A deterministic, plausible order/refund dataset (seeded PRNG: same seed, same rows, byte for
// byte) and the checksum the integration tests use as their oracle.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { copyFrom } from '../../electron/engine/targets/postgres/connect.ts';
import { parseQualifiedName, quoteIdent, quoteQualified } from '../../electron/engine/targets/postgres/sql.ts';

export interface SeedOptions {
  /** First UTC day, YYYY-MM-DD. */
  from: string;
  days: number;
  ordersPerDay: number;
  seed: number;
}

export interface SeedSummary {
  orders: number;
  refunds: number;
  /** Half-open range of paid_at: [from, to). */
  from: string;
  to: string;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const CUSTOMERS = 5000;
const REFUND_RATE = 0.08;
const REASONS: readonly [string, number][] = [
  ['customer_request', 0.4],
  ['damaged', 0.2],
  ['late_delivery', 0.18],
  ['wrong_item', 0.14],
  ['duplicate_charge', 0.08],
];

/** mulberry32: tiny, fast and good enough for test data; never Math.random. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TABLES_DDL = `
  create table orders (
    order_id bigint not null,
    customer_id int,
    paid_at timestamptz not null,
    paid_amount numeric(12,2) not null,
    status text not null
  );
  create table refunds (
    refund_id bigint not null,
    order_id bigint not null,
    refunded_at timestamptz not null,
    refund_amount numeric(12,2) not null,
    reason_code text not null
  );`;

// Built after loading: one sort per index is much faster than maintaining them row by row.
const KEYS_DDL = `
  alter table orders add primary key (order_id);
  create index orders_paid_at on orders (paid_at);
  alter table refunds add primary key (refund_id);
  create index refunds_refunded_at on refunds (refunded_at);`;

/** Creates empty `orders` and `refunds` tables (keys and indexes included) in the current schema. */
export async function createOrderTables(client: pg.Client): Promise<void> {
  await client.query(TABLES_DDL + KEYS_DDL);
}

/** Creates `orders` and `refunds` and fills them; same options → identical rows. */
export async function seedOrders(client: pg.Client, opts: SeedOptions): Promise<SeedSummary> {
  const random = prng(opts.seed);
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const start = Date.parse(`${opts.from}T00:00:00Z`);
  if (Number.isNaN(start)) throw new Error(`seedOrders: from ${JSON.stringify(opts.from)} is not YYYY-MM-DD`);
  const o = { id: [] as string[], customer: [] as number[], paidAt: [] as string[], amount: [] as string[], status: [] as string[] };
  const r = { id: [] as string[], order: [] as string[], at: [] as string[], amount: [] as string[], reason: [] as string[] };

  for (let day = 0; day < opts.days; day++) {
    // Busy afternoons, quiet nights: 70% around 14:00 UTC, the rest spread evenly.
    const times = Array.from({ length: opts.ordersPerDay }, () => {
      const ms = random() < 0.7 ? (14 + normal() * 3.5) * HOUR_MS : random() * DAY_MS;
      return start + day * DAY_MS + Math.min(DAY_MS - 1, Math.max(0, Math.round(ms)));
    }).sort((x, y) => x - y);
    for (const paidAt of times) {
      const orderId = String(1_000_000 + o.id.length + 1);
      // A few loyal customers buy much more often than the long tail.
      const customer = Math.min(CUSTOMERS, 1 + Math.floor(CUSTOMERS * random() ** 1.6));
      const cents = Math.min(50_000, Math.max(100, Math.round(Math.exp(Math.log(4000) + 0.9 * normal()))));
      let status = 'paid';
      if (random() < REFUND_RATE) {
        const full = random() < 0.7;
        status = full ? 'refunded' : 'partially_refunded';
        const refundCents = full ? cents : Math.max(1, Math.round(cents * (0.1 + 0.8 * random())));
        const delay = random() < 0.6 ? (1 + random() * 47) * HOUR_MS : (2 + random() * 28) * DAY_MS;
        r.id.push(String(5_000_000 + r.id.length + 1));
        r.order.push(orderId);
        r.at.push(new Date(paidAt + Math.round(delay)).toISOString());
        r.amount.push((refundCents / 100).toFixed(2));
        r.reason.push(pick(REASONS, random()));
      }
      o.id.push(orderId);
      o.customer.push(customer);
      o.paidAt.push(new Date(paidAt).toISOString());
      o.amount.push((cents / 100).toFixed(2));
      o.status.push(status);
    }
  }

  await client.query(TABLES_DDL);
  // COPY is the fastest load; every value here is digits, ISO timestamps or fixed words, so the
  // text format needs no escaping.
  await copyRows(client, 'copy orders from stdin', [o.id, o.customer, o.paidAt, o.amount, o.status]);
  await copyRows(client, 'copy refunds from stdin', [r.id, r.order, r.at, r.amount, r.reason]);
  await client.query(`${KEYS_DDL} analyze orders; analyze refunds;`);
  return {
    orders: o.id.length,
    refunds: r.id.length,
    from: opts.from,
    to: new Date(start + opts.days * DAY_MS).toISOString().slice(0, 10),
  };
}

async function copyRows(client: pg.Client, sql: string, columns: readonly (readonly (string | number)[])[]): Promise<void> {
  const count = columns[0]?.length ?? 0;
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(columns.map((c) => c[i]).join('\t'));
  await pipeline(Readable.from([lines.join('\n') + (count > 0 ? '\n' : '')]), copyFrom(client, sql));
}

function pick(weighted: readonly [string, number][], u: number): string {
  let acc = 0;
  for (const [value, weight] of weighted) {
    acc += weight;
    if (u < acc) return value;
  }
  return weighted[weighted.length - 1]?.[0] ?? '';
}

/** Creates `<schema>.mart_order_daily` (empty) and returns its qualified name. */
export async function createOrderMart(client: pg.Client, schema = 'mart'): Promise<string> {
  await client.query(`create schema if not exists ${quoteIdent(schema)}`);
  const table = quoteQualified([schema, 'mart_order_daily']);
  await client.query(`create table ${table} (
    order_date date not null,
    customer_id int not null,
    orders bigint not null,
    paid_amount numeric(14,2) not null,
    primary key (order_date, customer_id))`);
  return `${quoteIdent(schema)}.mart_order_daily`;
}

/**
 * md5 over every row of `table` with `column` in [from, to), each row as its text form, in
 * byte order (COLLATE "C"): equal only if the rows are equal byte for byte.
 */
export async function orderedPartitionMd5(client: pg.Client, table: string, column: string, from: string, to: string): Promise<string> {
  const relation = quoteQualified(parseQualifiedName(table, 'table'));
  const result = await client.query<{ md5: string }>(
    `select md5(coalesce(string_agg(t::text, E'\\n' order by t::text collate "C"), '')) as md5
       from ${relation} t where t.${quoteIdent(column)} >= $1 and t.${quoteIdent(column)} < $2`,
    [from, to],
  );
  return result.rows[0]?.md5 ?? '';
}
