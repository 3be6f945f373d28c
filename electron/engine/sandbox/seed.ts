/**
 * Training data for the sandbox: a small billing warehouse (orders, refunds, the refund-reason
 * mapping) and its marts, the product's event log, and the payment partner's settlements as
 * the nightly load keeps them, generated in SQL so it is deterministic and loads in well under a
 * second. Hash functions stand in for randomness: the same rows on every machine.
 */
import { query, type PgClient } from '../targets/postgres/connect.ts';

export const SANDBOX_FROM = '2026-03-01';
export const SANDBOX_TO = '2026-08-01';
export const ORDERS_PER_DAY = 400;

/** Deterministic 0..n-1 from a bigint expression. */
const pick = (expr: string, n: number): string => `(abs(hashint8(${expr})) % ${n})`;

/**
 * Billing periods already invoiced (the workspace's closed partitions of mart.refund_daily, see
 * jobs.ts sandboxConfig): empty until a scenario closes some. Idempotent, so a sandbox seeded
 * before it existed gets it at its next start.
 */
export const BILLING_SQL = `
CREATE SCHEMA IF NOT EXISTS billing;
CREATE TABLE IF NOT EXISTS billing.invoiced_days (
  day         date PRIMARY KEY,
  invoice_run text NOT NULL
);
`;

export const SCHEMA_SQL = `
CREATE TABLE orders (
  order_id    bigint PRIMARY KEY,
  customer_id int           NOT NULL,
  paid_at     timestamptz   NOT NULL,
  paid_amount numeric(12,2) NOT NULL,
  status      text          NOT NULL
);
CREATE TABLE refund_reasons (
  reason_code text PRIMARY KEY,
  reason      text NOT NULL
);
CREATE TABLE refunds (
  refund_id     bigint PRIMARY KEY,
  order_id      bigint        NOT NULL REFERENCES orders,
  refunded_at   timestamptz   NOT NULL,
  refund_amount numeric(12,2) NOT NULL,
  reason_code   text          NOT NULL REFERENCES refund_reasons
);
CREATE VIEW refund_timeline AS
  SELECT r.refund_id, r.order_id, o.paid_at, r.refunded_at, r.refund_amount, r.reason_code
    FROM refunds r JOIN orders o USING (order_id);
CREATE TABLE app_events (
  event_id   bigint PRIMARY KEY,
  user_id    int         NOT NULL,
  event_type text        NOT NULL,
  event_time timestamptz NOT NULL,
  amount     numeric(12,2)
);
CREATE SCHEMA mart;
CREATE TABLE mart.mart_order_daily (
  order_date  date          NOT NULL,
  customer_id int           NOT NULL,
  orders      bigint        NOT NULL,
  paid_amount numeric(14,2) NOT NULL,
  PRIMARY KEY (order_date, customer_id)
);
CREATE TABLE mart.refund_daily (
  refund_date   date          NOT NULL,
  reason        text          NOT NULL,
  refunds       bigint        NOT NULL,
  refund_amount numeric(14,2) NOT NULL,
  PRIMARY KEY (refund_date, reason)
);
CREATE SCHEMA partner;
CREATE TABLE partner.settlements (
  settlement_date date          NOT NULL,
  transaction_id  text          PRIMARY KEY,
  order_id        bigint        NOT NULL,
  captured_at     timestamptz   NOT NULL,
  card_brand      text          NOT NULL,
  gross_amount    numeric(12,2) NOT NULL,
  fee_amount      numeric(12,2) NOT NULL,
  net_amount      numeric(12,2) NOT NULL,
  currency        text          NOT NULL
);
CREATE INDEX settlements_date ON partner.settlements (settlement_date);
`;

export function ordersSql(from = SANDBOX_FROM, to = SANDBOX_TO, perDay = ORDERS_PER_DAY): string {
  const days = `(date '${to}' - date '${from}')`;
  return `
INSERT INTO orders
SELECT g,
       1 + ${pick('g * 31', 5000)},
       (date '${from}' + (g / ${perDay})::int)::timestamptz + make_interval(secs => ${pick('g * 17', 86400)}),
       (100 + ${pick('g * 7', 49900)}) / 100.0,
       'paid'
  FROM generate_series(0, ${days} * ${perDay} - 1) AS g`;
}

export const REASONS_SQL = `
INSERT INTO refund_reasons VALUES
  ('DMG', 'damaged'), ('LATE', 'late delivery'), ('WRONG', 'wrong item'), ('DUP', 'duplicate charge'), ('OTHER', 'other')`;

/** About 8 % of orders are refunded, hours to days after payment. */
export const REFUNDS_SQL = `
INSERT INTO refunds
SELECT o.order_id,
       o.order_id,
       o.paid_at + make_interval(secs => 3600 + ${pick('o.order_id * 13', 5 * 86400)}),
       round(o.paid_amount * (50 + ${pick('o.order_id * 19', 51)}) / 100.0, 2),
       (ARRAY['DMG','LATE','WRONG','DUP','OTHER'])[1 + ${pick('o.order_id * 23', 5)}]
  FROM orders o
 WHERE ${pick('o.order_id * 11', 100)} < 8`;

/** The product's event log, the raw data an analytics vendor exports hourly to the lake. */
export const EVENTS_FROM = '2026-07-13';
export const EVENTS_DAYS = 3;
export const EVENTS_PER_HOUR = 120;
export const EVENTS_SQL = `
INSERT INTO app_events
SELECT g,
       1 + ${pick('g * 29', 5000)},
       (ARRAY['view','click','add_to_cart','purchase'])[1 + ${pick('g * 41', 4)}],
       timestamptz '${EVENTS_FROM} 00:00:00+00' + make_interval(hours => (g / ${EVENTS_PER_HOUR})::int, secs => ${pick('g * 43', 3600)}),
       CASE WHEN ${pick('g * 47', 4)} = 3 THEN (500 + ${pick('g * 53', 20000)}) / 100.0 END
  FROM generate_series(0, ${EVENTS_DAYS} * 24 * ${EVENTS_PER_HOUR} - 1) AS g`;

/**
 * The payment partner's settlement files cover these days: one file a day, dropped into the
 * lake, loaded nightly into partner.settlements.
 */
export const PARTNER_FROM = '2026-07-01';
export const PARTNER_DAYS = 10;

/** The columns of the partner's files, in their order (the header line). */
export const PARTNER_COLUMNS = [
  'settlement_date',
  'transaction_id',
  'order_id',
  'captured_at',
  'card_brand',
  'gross_amount',
  'fee_amount',
  'net_amount',
  'currency',
] as const;
export type PartnerRow = Record<(typeof PARTNER_COLUMNS)[number], string>;

/**
 * What the partner settled for the days from :from to :to (exclusive), as the text its files
 * carry: each paid order captured that day (UTC), less a 2.9 % + 0.30 fee. The one definition
 * of the partner's data: the seed, the files in the lake and scenario 7's check all read it.
 */
export const PARTNER_ROWS_SQL = `
SELECT to_char(o.paid_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS settlement_date,
       'PT' || lpad(o.order_id::text, 8, '0') AS transaction_id,
       o.order_id::text AS order_id,
       to_char(o.paid_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS captured_at,
       (ARRAY['visa','mastercard','amex','jcb'])[1 + ${pick('o.order_id * 59', 4)}] AS card_brand,
       o.paid_amount::text AS gross_amount,
       round(o.paid_amount * 0.029 + 0.30, 2)::text AS fee_amount,
       (o.paid_amount - round(o.paid_amount * 0.029 + 0.30, 2))::text AS net_amount,
       'USD' AS currency
  FROM orders o
 WHERE o.paid_at >= CAST(:from AS date)::timestamp AT TIME ZONE 'UTC'
   AND o.paid_at < CAST(:to AS date)::timestamp AT TIME ZONE 'UTC'
 ORDER BY o.order_id`;

/** The day `n` days after `day` ('YYYY-MM-DD'). */
export function nextDay(day: string, n = 1): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

/** The partner's rows of the days from `from` to `to` (exclusive), ordered by transaction. */
export async function partnerRows(client: PgClient, from: string, to = nextDay(from)): Promise<PartnerRow[]> {
  return (await query<PartnerRow>(client, PARTNER_ROWS_SQL, { from, to })).rows;
}

/** The partner's settlements as the nightly load left them: every day of its files. */
async function seedSettlements(client: PgClient): Promise<void> {
  const to = nextDay(PARTNER_FROM, PARTNER_DAYS);
  await query(
    client,
    `INSERT INTO partner.settlements
     SELECT CAST(settlement_date AS date), transaction_id, CAST(order_id AS bigint), CAST(captured_at AS timestamptz), card_brand,
            CAST(gross_amount AS numeric), CAST(fee_amount AS numeric), CAST(net_amount AS numeric), currency
       FROM (${PARTNER_ROWS_SQL}) AS p`,
    { from: PARTNER_FROM, to },
  );
}

/** The marts as the daily pipeline builds them (correct, before any defect is injected). */
export const MARTS_SQL = `
INSERT INTO mart.mart_order_daily
SELECT cast(paid_at AS date), customer_id, count(*), sum(paid_amount) FROM orders GROUP BY 1, 2;
INSERT INTO mart.refund_daily
SELECT cast(r.refunded_at AS date), m.reason, count(*), sum(r.refund_amount)
  FROM refunds r JOIN refund_reasons m USING (reason_code) GROUP BY 1, 2;
`;

export async function seedWarehouse(client: PgClient): Promise<void> {
  await client.query('BEGIN');
  await client.query(`SET LOCAL TimeZone = 'UTC'`);
  await client.query(SCHEMA_SQL);
  await client.query(BILLING_SQL);
  await client.query(ordersSql());
  await client.query(REASONS_SQL);
  await client.query(REFUNDS_SQL);
  await client.query(EVENTS_SQL);
  await client.query('CREATE INDEX app_events_time ON app_events (event_time)');
  await client.query('CREATE INDEX orders_paid_at ON orders (paid_at)');
  await client.query('CREATE INDEX refunds_refunded_at ON refunds (refunded_at)');
  await client.query(MARTS_SQL);
  await seedSettlements(client);
  await client.query('COMMIT');
  await client.query('ANALYZE');
}
