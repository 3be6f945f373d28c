/**
 * The pieces scenarios' definitions of "fixed" are made of: the target reconciles with the
 * source, nothing is duplicated, a run covered the range, the evidence is on record.
 */
import type { Store } from '../store/index.ts';
import type { PgClient } from '../targets/postgres/connect.ts';
import { query } from '../targets/postgres/connect.ts';

export const REFUNDS = { job: 'refund-reason-daily', table: 'mart.refund_daily', column: 'refund_date' } as const;
export const ORDERS = { job: 'order-daily-mart', table: 'mart.mart_order_daily', column: 'order_date' } as const;

/**
 * The refund defect scenarios 1 and 9 inject: the mart's days in [from, to) recomputed with
 * every "damaged" refund (reason code DMG) counted as "other", as the mapping bug did.
 */
export async function mislabelDamagedRefunds(client: PgClient, from: string, to: string): Promise<void> {
  await client.query(`delete from mart.refund_daily where refund_date >= $1 and refund_date < $2`, [from, to]);
  await client.query(
    `insert into mart.refund_daily
     select cast(r.refunded_at as date), case when r.reason_code = 'DMG' then 'other' else m.reason end, count(*), sum(r.refund_amount)
       from refunds r join refund_reasons m using (reason_code)
      where r.refunded_at >= $1 and r.refunded_at < $2 group by 1, 2`,
    [from, to],
  );
}

export interface ScenarioCheck {
  name: string;
  ok: boolean;
  detail: string;
}

const SOURCE_OF: Record<string, string> = {
  [REFUNDS.table]: `select cast(r.refunded_at as date) as d, m.reason as k, count(*)::bigint as n, sum(r.refund_amount)::numeric(14,2) as v
                      from refunds r join refund_reasons m using (reason_code) group by 1, 2`,
  [ORDERS.table]: `select cast(paid_at as date) as d, customer_id::text as k, count(*)::bigint as n, sum(paid_amount)::numeric(14,2) as v from orders group by 1, 2`,
};
const TARGET_OF: Record<string, string> = {
  [REFUNDS.table]: `select refund_date as d, reason as k, refunds as n, refund_amount as v from mart.refund_daily`,
  [ORDERS.table]: `select order_date as d, customer_id::text as k, orders as n, paid_amount as v from mart.mart_order_daily`,
};

/** Target rows equal a fresh recomputation from the source over the range. */
export async function reconciles(client: PgClient, table: string, range: { from: string; to: string }): Promise<ScenarioCheck> {
  const digest = (sql: string): string =>
    `select count(*)::text as n, coalesce(md5(string_agg(t::text, ',' order by t::text)), '') as h from (${sql}) t where d >= :from and d < :to`;
  const [src, tgt] = [
    await query<{ n: string; h: string }>(client, digest(SOURCE_OF[table] ?? ''), range),
    await query<{ n: string; h: string }>(client, digest(TARGET_OF[table] ?? ''), range),
  ];
  const ok = src.rows[0]?.h === tgt.rows[0]?.h;
  return {
    name: 'target reconciles with the source',
    ok,
    detail: ok
      ? `${tgt.rows[0]?.n} rows of ${table} match a recomputation from the source`
      : `${table} differs from the source over ${range.from} → ${range.to} (${tgt.rows[0]?.n} rows vs ${src.rows[0]?.n} expected)`,
  };
}

export async function noDuplicates(client: PgClient, table: string, key: string): Promise<ScenarioCheck> {
  const r = await query<{ n: string }>(
    client,
    `select count(*)::text as n from (select 1 from ${table} group by ${key} having count(*) > 1) d`,
    {},
  );
  const n = Number(r.rows[0]?.n ?? 0);
  return {
    name: 'nothing duplicated',
    ok: n === 0,
    detail: n === 0 ? 'no duplicate keys in the target' : `${n} duplicate key(s) in ${table}`,
  };
}

/** The runs of a job whose range covers the scenario's range. */
export function coveringRuns(store: Store, job: string, range: { from: string; to: string }, since: string) {
  return store.runs
    .list({ job, limit: 1000 })
    .filter((r) => r.createdAt >= since && (r.rangeFrom ?? '') <= range.from && (r.rangeTo ?? '') >= range.to);
}

/**
 * The run that fixed it, or — while the trainee is still on the way — the latest run over the
 * range, so the evidence checks that follow show the progress made on its plan so far.
 */
export function succeededRun(
  store: Store,
  job: string,
  range: { from: string; to: string },
  since: string,
): ScenarioCheck & { planHash?: string; runId?: string } {
  const runs = coveringRuns(store, job, range, since);
  const run = runs.find((r) => r.status === 'succeeded');
  const name = `a ${job} run succeeded over the whole range`;
  if (run)
    return {
      name,
      ok: true,
      detail: `run ${run.runId} published ${run.partitionsPublished} partitions and reconciled`,
      planHash: run.planHash,
      runId: run.runId,
    };
  const latest = runs[0]; // store.runs.list gives the newest first
  if (!latest) return { name, ok: false, detail: `no ${job} run covers ${range.from} → ${range.to} yet` };
  return {
    name,
    ok: false,
    detail: `run ${latest.runId} covers the range but is ${latest.status} (${latest.partitionsPublished} partition(s) published)`,
    planHash: latest.planHash,
    runId: latest.runId,
  };
}

export function evidenceOf(
  store: Store,
  planHash: string | undefined,
  runId: string | undefined,
  kinds: { kind: string; label: string; byRun?: boolean }[],
): ScenarioCheck[] {
  return kinds.map(({ kind, label, byRun }) => {
    const found = byRun
      ? store.evidence.list({ runId, kind }).length > 0
      : planHash !== undefined && store.evidence.list({ planHash, kind }).length > 0;
    return {
      name: `evidence: ${label}`,
      ok: found,
      detail: found ? `${label} on record` : `no ${label} on record for this run's plan — the checklist skipped a step`,
    };
  });
}

/** A snapshot of the partitions about to be overwritten, taken for this run since the scenario was loaded. */
export function snapshotTaken(store: Store, runId: string | undefined, since: string): ScenarioCheck {
  const ok =
    runId !== undefined &&
    store.evidence.list({ kind: 'snapshot' }).some((e) => e.createdAt >= since && (e.body as { runId?: unknown } | null)?.runId === runId);
  return {
    name: 'evidence: snapshot backup',
    ok,
    detail: ok
      ? `a snapshot of the partitions run ${runId} overwrote is on record (run-backfill restore can undo it)`
      : `no snapshot taken for this run: run-backfill snapshot <job> --from … --to … --run-id ${runId ?? '<id>'} before executing`,
  };
}

export function signedOff(store: Store, planHash: string | undefined): ScenarioCheck {
  const ok =
    planHash !== undefined &&
    store.audit.list({}).some((e) => e.event === 'signoff.imported' && (e.detail as { planHash?: string }).planHash === planHash);
  return {
    name: 'evidence: lead sign-off',
    ok,
    detail: ok ? "a lead signed this run's plan before execution" : "no lead sign-off on record for this run's plan",
  };
}

/** Stopped part way (halted, paused, or killed) and resumed by the same run. */
export function resumedAfterStop(store: Store, runId: string | undefined, condition?: string): ScenarioCheck {
  const events = runId ? store.audit.list({ runId }) : [];
  const fired = condition
    ? events.some((e) => e.event === 'run.stop-condition' && (e.detail as { condition?: string }).condition === condition)
    : true;
  const resumed = events.some((e) => e.event === 'run.resumed');
  const ok = resumed && fired;
  const what = condition ? `halted by the ${condition} condition` : 'stopped part way';
  return {
    name: `the run was ${what} and resumed`,
    ok,
    detail: ok ? `the run ${what}, then resumed to completion` : `the run was never ${what} and resumed — practise the stop and the resume`,
  };
}
