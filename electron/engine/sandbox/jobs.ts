/** The job files a sandbox workspace starts with: the same shape users write (DESIGN §4). */

export const SANDBOX_JOBS: Record<string, string> = {
  'order-daily-mart': `# Daily orders and paid amount per customer (DESIGN.md §4's example).
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
};

export function sandboxConfig(port: number): string {
  return `# Sandbox workspace, written by Backfill Runbook. Training data only — not production.
sandbox: true
ledger: ./runbook.sqlite
connections:
  warehouse:
    kind: postgres
    # loopback only, trust authentication: the sandbox has no secrets to keep
    url: postgres://postgres@127.0.0.1:${port}/sandbox
`;
}
