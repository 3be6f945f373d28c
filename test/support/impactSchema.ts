/**
 * The impact scope's test schema (integration and e2e): mart.daily with a view on a view, a
 * materialized view, foreign keys in and out, a trigger and a publication, and a workspace of
 * jobs reading it — directly, through a view, and down a chain — beside two decoys that must
 * not count (a table name in a string literal; the same name on another database).
 */
import type { Workspace } from './workspace.ts';

export const IMPACT_SCHEMA = `
create schema mart;
create table mart.customers (customer_id int primary key, name text not null);
insert into mart.customers select g, 'customer ' || g from generate_series(1, 6000) g;
create table mart.daily (
  order_date date not null, customer_id int not null references mart.customers,
  orders bigint not null, paid_amount numeric(14,2) not null, primary key (order_date, customer_id));
create table mart.daily_notes (
  order_date date not null, customer_id int not null, note text,
  constraint notes_daily foreign key (order_date, customer_id) references mart.daily on delete cascade);
create view mart.v_daily as select order_date, sum(paid_amount) as amount from mart.daily group by 1;
create view mart.v_weekly as select date_trunc('week', order_date) as week, sum(amount) as amount from mart.v_daily group by 1;
create materialized view mart.mv_monthly as select date_trunc('month', order_date) as month, sum(paid_amount) as amount from mart.daily group by 1;
create table mart.daily_log (at timestamptz not null default now(), op text not null);
create function mart.log_daily() returns trigger language plpgsql as $$ begin insert into mart.daily_log (op) values (tg_op); return null; end $$;
create trigger daily_log after insert or delete on mart.daily for each statement execute function mart.log_daily();
create publication mart_pub for table mart.daily;
create table mart.weekly (week date not null, amount numeric(14,2) not null, primary key (week));
create table mart.quarterly (quarter date not null, amount numeric(14,2) not null, primary key (quarter));
`;

export const IMPACT_JOB = `name: daily-mart
unit: day
timezone: UTC
classification:
  billing: false
  downstream: [mart.v_weekly, dashboard.revenue_weekly]
source:
  connection: warehouse
  query: |
    select cast(paid_at as date) as order_date, customer_id, count(*)::bigint as orders, sum(paid_amount) as paid_amount
    from orders where paid_at >= :partition_start and paid_at < :partition_end group by 1, 2
target: { connection: warehouse, table: mart.daily, partition_column: order_date, key: [order_date, customer_id] }
write_mode: overwrite-partition
validation:
  - name: rows
    source: select count(*) as rows from orders where paid_at >= :partition_start and paid_at < :partition_end
    target: select coalesce(sum(orders), 0) as rows from mart.daily where order_date >= :partition_start and order_date < :partition_end
`;

/** A workspace job reading `sql` on `connection` and writing `table`. */
const reader = (name: string, sql: string, table: string, unit = 'day', connection = 'warehouse') => `name: ${name}
unit: ${unit}
source:
  connection: ${connection}
  query: |
    ${sql.trim().split('\n').join('\n    ')}
target: { connection: warehouse, table: ${table}, partition_column: ${unit === 'day' ? 'week' : 'quarter'} }
write_mode: overwrite-partition
`;

/** daily-mart and the workspace around it; `archive` must be a connection to another database. */
export function writeImpactJobs(ws: Workspace): void {
  ws.writeJob('daily-mart', IMPACT_JOB);
  ws.writeJob(
    'weekly-rollup',
    reader(
      'weekly-rollup',
      `select date_trunc('week', d.order_date)::date as week, sum(d.paid_amount) as amount from mart.daily d join mart.customers c using (customer_id) group by 1`,
      'mart.weekly',
    ),
  );
  ws.writeJob(
    'customer-ltv',
    reader(
      'customer-ltv',
      `with per as (select customer_id, sum(paid_amount) as amount from "mart"."daily" group by 1) select current_date as week, sum(amount) as amount from per`,
      'mart.ltv',
    ),
  );
  ws.writeJob('dashboard-feed', reader('dashboard-feed', `select week::date as week, amount from mart.v_weekly`, 'mart.dashboard'));
  ws.writeJob(
    'quarterly-rollup',
    reader(
      'quarterly-rollup',
      `select date_trunc('quarter', week)::date as quarter, sum(amount) as amount from mart.weekly group by 1`,
      'mart.quarterly',
      'month',
    ),
  );
  ws.writeJob(
    'literal-only',
    reader('literal-only', `select current_date as week, count(*) as amount from orders where 'mart.daily' <> ''`, 'mart.scratch'),
  );
  ws.writeJob('elsewhere', reader('elsewhere', `select order_date as week, amount from mart.daily`, 'mart.scratch', 'day', 'archive'));
}
