/** The job files a sandbox workspace starts with: the same shape users write (docs/design.md §4). */

/**
 * The refine step (DuckDB SQL over `source`, one raw hour): parse the raw event, derive its
 * columns, and keep each event id once (a vendor re-export can repeat events). Shared by the
 * sandbox's job file and by what the daily ETL seeded, so both layers are the same shape.
 */
export const REFINE_SQL = `select cast(event_id as bigint) as event_id,
       cast(user_id as integer) as user_id,
       lower(event_type) as event_type,
       cast(event_time as timestamptz) as event_time,
       cast(cast(event_time as timestamptz) as date) as event_date,
       extract(hour from cast(event_time as timestamptz))::integer as event_hour,
       cast(amount as decimal(12,2)) as amount,
       coalesce(cast(amount as decimal(12,2)), 0) > 0 as is_revenue
  from source
 where cast(event_time as timestamptz) >= :partition_start and cast(event_time as timestamptz) < :partition_end
qualify row_number() over (partition by event_id order by event_time) = 1
 order by event_id`;

/**
 * The payment partner's nightly settlement load (S3 CSV → Postgres), and the team's variant for
 * the partner's semicolon-separated exports: the same job but for source.csv.delimiter.
 */
function partnerSettlementsJob(name: string, delimiter: ',' | ';', header: string): string {
  return `${header}
name: ${name}
unit: day
timezone: UTC
classification:
  billing: true
  external_partner: true
  downstream: [finance.settlement_monthly]
source:
  kind: s3
  connection: lake
  # one file a day from the partner, then their empty _complete marker
  path: "partner/settlements/dt={date}/"
  format: csv
  csv: { header: true, delimiter: "${delimiter}" }
target:
  connection: warehouse
  table: partner.settlements
  partition_column: settlement_date
  key: [transaction_id]
write_mode: overwrite-partition
validation:
  - name: rows and amounts reconcile with the partner's file
    source: select count(*) as rows, sum(cast(gross_amount as decimal(12,2))) as gross, sum(cast(net_amount as decimal(12,2))) as net
            from source
    target: select count(*) as rows, sum(gross_amount) as gross, sum(net_amount) as net from partner.settlements
            where settlement_date >= :partition_start and settlement_date < :partition_end
    tolerance: 0
`;
}

export const SANDBOX_JOBS: Record<string, string> = {
  'order-daily-mart': `# Daily orders and paid amount per customer (docs/design.md §4's example).
name: order-daily-mart
unit: day
timezone: UTC
classification:
  billing: true
  external_partner: false
  downstream: [dashboard.revenue_weekly]
source:
  connection: warehouse
  query: |
    select cast(paid_at as date) as order_date, customer_id,
           count(*)::bigint as orders, sum(paid_amount) as paid_amount
    from orders
    where paid_at >= :partition_start and paid_at < :partition_end
    group by 1, 2
target:
  connection: warehouse
  table: mart.mart_order_daily
  partition_column: order_date
  key: [order_date, customer_id]
write_mode: overwrite-partition
validation:
  - name: orders and amount reconcile
    source: select count(*) as rows, sum(paid_amount) as amount from orders
            where paid_at >= :partition_start and paid_at < :partition_end
    target: select coalesce(sum(orders), 0) as rows, sum(paid_amount) as amount from mart.mart_order_daily
            where order_date >= :partition_start and order_date < :partition_end
    tolerance: 0
quality:
  - { kind: null_rate, table: orders, column: customer_id, time_column: paid_at, max: 0.01, severity: fail }
  - { kind: row_count_outlier, table: orders, time_column: paid_at, window: 7, max_ratio: 3, severity: fail }
`,
  'refund-reason-daily': `# Refunds per day and reason, for billing reconciliation.
name: refund-reason-daily
unit: day
timezone: UTC
classification:
  billing: true
  external_partner: false
  downstream: [finance.settlement_monthly]
source:
  connection: warehouse
  query: |
    select cast(r.refunded_at as date) as refund_date, m.reason,
           count(*)::bigint as refunds, sum(r.refund_amount) as refund_amount
    from refunds r join refund_reasons m using (reason_code)
    where r.refunded_at >= :partition_start and r.refunded_at < :partition_end
    group by 1, 2
target:
  connection: warehouse
  table: mart.refund_daily
  partition_column: refund_date
  key: [refund_date, reason]
write_mode: overwrite-partition
validation:
  - name: refunds and amount reconcile
    source: select count(*) as rows, sum(refund_amount) as amount from refunds
            where refunded_at >= :partition_start and refunded_at < :partition_end
    target: select coalesce(sum(refunds), 0) as rows, sum(refund_amount) as amount from mart.refund_daily
            where refund_date >= :partition_start and refund_date < :partition_end
    tolerance: 0
quality:
  - { kind: null_rate, table: refunds, column: reason_code, time_column: refunded_at, max: 0, severity: fail }
  - { kind: timestamp_order, table: refund_timeline, before: paid_at, after: refunded_at, time_column: refunded_at, max: 0, severity: fail }
  - { kind: row_count_outlier, table: refunds, time_column: refunded_at, window: 7, max_ratio: 3, severity: warn }
`,
  'raw-events-recover': `# Re-exports the product's event log, hour by hour, as raw JSON Lines in the lake — the
# vendor's hourly export, requested again for hours that never arrived. Copied from the
# automated export's job: it still writes where the automated export writes.
name: raw-events-recover
unit: hour
timezone: UTC
classification:
  billing: false
  external_partner: false
  downstream: [refined.event]
source:
  connection: warehouse
  query: |
    select event_id, user_id, event_type, event_time, amount
    from app_events
    where event_time >= :partition_start and event_time < :partition_end
target:
  kind: s3
  connection: lake
  path: "events/events_{date}_{hour}"
  # the automated export's prefix: the daily ETL processes whatever appears under it
  prefix: "events/"
  backfill_prefix: "events-backfill/"
write_mode: overwrite-partition
validation:
  - name: events exported
    source: select count(*) as records from app_events where event_time >= :partition_start and event_time < :partition_end
    target: records
`,
  'raw-events-refined': `# Refines recovered raw hours from the backfill prefix into the refined layer (Parquet), one
# hour at a time, out of the daily ETL's way: the same SQL the daily ETL runs — parse the raw
# event, derive its columns, keep each event id once.
name: raw-events-refined
unit: hour
timezone: UTC
classification:
  billing: false
  external_partner: false
  downstream: [dashboard.engagement_daily]
source:
  kind: s3
  connection: lake
  path: "events-backfill/events-backfill_{date}_{hour}"
  query: |
${REFINE_SQL.split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
target:
  kind: s3
  connection: lake
  path: "refined/event/dt={date}/hour={hour}/"
  format: parquet
  parquet: { codec: zstd }
write_mode: overwrite-partition
validation:
  - name: one refined row per raw event id
    source: select count(distinct event_id) as records from source
    target: records
  - name: amounts carried over
    source: select sum(cast(amount as decimal(12,2))) as amount from (select distinct event_id, amount from source)
    target: select sum(amount) as amount from target
`,
  'partner-settlements': partnerSettlementsJob(
    'partner-settlements',
    ',',
    `# The nightly load of the payment partner's settlement files: one comma-separated CSV a day,
# dropped by the partner under partner/settlements/dt=YYYY-MM-DD/, loaded into
# partner.settlements. Finance closes the month on these rows.`,
  ),
  'partner-settlements-semicolon': partnerSettlementsJob(
    'partner-settlements-semicolon',
    ';',
    `# The partner's settlement files as their export tool writes them in its European locale:
# separated by ";". The same load as partner-settlements but for source.csv.delimiter. For
# reloading the days that arrived that way, and only those: the nightly job stays on ",".`,
  ),
};

/** The lake's bucket in the sandbox's S3 server. */
export const LAKE_BUCKET = 'sandbox-lake';

export function sandboxConfig(port: number, s3Endpoint: string): string {
  return `# Sandbox workspace, written by Backfill Runbook. Training data only — not production.
sandbox: true
ledger: ./runbook.sqlite
connections:
  warehouse:
    kind: postgres
    # loopback only, trust authentication: the sandbox has no secrets to keep
    url: postgres://postgres@127.0.0.1:${port}/sandbox
  lake:
    kind: s3
    bucket: ${LAKE_BUCKET}
    # a local S3 API server (s3rver) on loopback; requests go unsigned: no keys to keep
    endpoint: ${s3Endpoint}
    force_path_style: true
    no_sign_request: true
# Refund days already settled with the payment partner: overwriting them needs the plan to list
# them (overwrite_closed) and a lead's sign-off. The partner's invoice runs fill billing.invoiced_days.
closed_partitions:
  - targets: [mart.refund_daily]
    reason: refunds already invoiced to the payment partner
    probe: select day from billing.invoiced_days where day >= :range_start and day < :range_end
`;
}
