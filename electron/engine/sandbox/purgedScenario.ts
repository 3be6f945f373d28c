/**
 * Scenario 8: the source was purged for part of the range. A bug doubled the order mart's
 * amounts for the first half of June; meanwhile the upstream's retention job purged the raw
 * orders of three of those days (the mart's rows are the only copy left, and they are right:
 * computed before the bug). A backfill over the whole half-month would delete those three days.
 * The dry run says so (source-gone, blocked in every tier); the fix is to recompute around them.
 *
 * "Fixed": every day whose source is whole equals a recomputation from it; the three purged days
 * still hold exactly the rows they held; a dry run on record named exactly those three; and no
 * run since the scenario was loaded wrote them (accept_purged would have deleted them).
 */
import type { Store } from '../store/index.ts';
import { query } from '../targets/postgres/connect.ts';
import { ORDERS, noDuplicates, reconciles, type ScenarioCheck } from './checks.ts';
import type { Scenario } from './scenarios.ts';
import { manualSteps } from './scenarioSteps.ts';

const RANGE = { from: '2026-06-01', to: '2026-06-16' };
const PURGED = ['2026-06-08', '2026-06-09', '2026-06-10'];
const BEFORE = { from: '2026-06-01', to: '2026-06-08' };
const AFTER = { from: '2026-06-11', to: '2026-06-16' };

/** The purged days' rows of the mart, one text per day, in a fixed order. */
const DAYS_SQL = (table: string) =>
  `select to_char(order_date, 'YYYY-MM-DD') as d, md5(string_agg(t::text, ',' order by t::text)) as h, count(*)::int as n
     from ${table} t where to_char(order_date, 'YYYY-MM-DD') = any(:days) group by 1 order by 1`;

function dryRunNamedThem(store: Store, since: string): ScenarioCheck {
  const named = store.evidence.list({ kind: 'dry-run' }).some((e) => {
    const flags = (e.body as { flags?: { key: string; code: string }[] } | null)?.flags ?? [];
    const gone = flags.filter((f) => f.code === 'source-gone').map((f) => f.key);
    return e.createdAt >= since && PURGED.every((d) => gone.includes(d));
  });
  return {
    name: 'a dry run named the days whose source is gone',
    ok: named,
    detail: named
      ? `a dry run on record flagged ${PURGED.join(', ')}: source no longer there`
      : `no dry run since loading flagged ${PURGED.join(', ')}: dry-run the whole range first and read its questions`,
  };
}

function purgedDaysNotWritten(store: Store, since: string): ScenarioCheck {
  const wrote = store.runs
    .list({ job: ORDERS.job, limit: 1000 })
    .filter((r) => r.createdAt >= since)
    .flatMap((r) =>
      store.partitions
        .list(r.runId)
        .filter((p) => p.status === 'published' && PURGED.includes(p.key))
        .map((p) => `${p.key} by ${r.runId}`),
    );
  return {
    name: 'no run overwrote a day whose source is gone',
    ok: wrote.length === 0,
    detail:
      wrote.length === 0
        ? 'none of the three purged days was written: their rows are still the only copy'
        : `${wrote.join(', ')}: overwriting a purged day deletes rows the source can no longer give back (accept_purged is for data meant to go)`,
  };
}

export const PURGED_SCENARIO: Scenario = {
  id: 8,
  slug: 'source-purged',
  title: 'The source was purged for part of the range',
  story:
    "From 2026-06-01 to 2026-06-15 the order mart's amounts are doubled: a bug, now fixed. But the upstream's retention job has since purged the raw orders of 2026-06-08 to 2026-06-10 — the mart's rows of those three days are the only copy left, and they are right. Recompute what can be recomputed, and lose nothing.",
  job: ORDERS.job,
  range: RANGE,
  steps: [
    'run-backfill order-daily-mart --from 2026-06-01 --to 2026-06-16 --run-id bf-purged-whole --dry-run   (read its questions: which days can no longer be recomputed?)',
    ...manualSteps({ job: ORDERS.job, from: BEFORE.from, to: BEFORE.to, runId: 'bf-purged-before', flags: '', note: false }),
    ...manualSteps({ job: ORDERS.job, from: AFTER.from, to: AFTER.to, runId: 'bf-purged-after', flags: '' }),
  ],
  fixed:
    'Every day from 2026-06-01 to 2026-06-15 whose source is whole equals a recomputation from it, the three purged days keep exactly the rows they had, a dry run named those three, and no run wrote them.',
  async inject({ client }) {
    await client.query(
      `update mart.mart_order_daily set paid_amount = paid_amount * 2
        where order_date >= '2026-06-01' and order_date < '2026-06-16' and order_date not in ('2026-06-08', '2026-06-09', '2026-06-10')`,
    );
    // What the check compares the purged days with: the mart's rows as the bug and the purge left them.
    await client.query(`create schema if not exists training`);
    await client.query(
      `create table training.purged_days as select * from mart.mart_order_daily where order_date in ('2026-06-08', '2026-06-09', '2026-06-10')`,
    );
    const purged = `select order_id from orders where paid_at >= '2026-06-08' and paid_at < '2026-06-11'`;
    await client.query(`delete from refunds where order_id in (${purged})`);
    await client.query(`delete from orders where order_id in (${purged})`);
  },
  async check({ client, store, since }) {
    const now = await query<{ d: string; h: string; n: number }>(client, DAYS_SQL('mart.mart_order_daily'), { days: PURGED });
    const kept = await query<{ d: string; h: string; n: number }>(client, DAYS_SQL('training.purged_days'), { days: PURGED });
    const same = JSON.stringify(now.rows) === JSON.stringify(kept.rows) && kept.rows.length === PURGED.length;
    const missing = PURGED.filter((d) => !now.rows.some((r) => r.d === d));
    return [
      // Each names its range in its detail when it does not hold.
      await reconciles(client, ORDERS.table, BEFORE),
      await reconciles(client, ORDERS.table, AFTER),
      {
        name: 'the purged days keep their rows',
        ok: same,
        detail: same
          ? `${kept.rows.reduce((n, r) => n + r.n, 0)} rows of ${PURGED.join(', ')} are exactly as they were`
          : missing.length > 0
            ? `${missing.join(', ')} lost their rows: the source cannot give them back (restore them from the run's snapshot)`
            : `the rows of ${PURGED.filter((d) => now.rows.find((r) => r.d === d)?.h !== kept.rows.find((r) => r.d === d)?.h).join(', ')} changed`,
      },
      await noDuplicates(client, ORDERS.table, 'order_date, customer_id'),
      dryRunNamedThem(store, since),
      purgedDaysNotWritten(store, since),
    ];
  },
};
