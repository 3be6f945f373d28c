/**
 * Scenario 9: the range crosses closed billing periods. Refund reasons were mapped wrong from
 * 2026-06-20 to 2026-07-10 (the scenario-1 bug again). June's refunds have already been invoiced
 * to the payment partner: the workspace declares those days closed (backfill.config.yaml's
 * closed_partitions, read from billing.invoiced_days). Rewriting them would change what was
 * invoiced; finance corrects June with a credit note. July is open: recompute it.
 *
 * "Fixed": July's days equal a recomputation from the source, by a run carrying its dry run and
 * a lead's sign-off; June's days are exactly as invoiced; a dry run on record named the closed
 * days; and no run since the scenario was loaded wrote a closed day.
 */
import type { Store } from '../store/index.ts';
import { query } from '../targets/postgres/connect.ts';
import {
  REFUNDS,
  evidenceOf,
  mislabelDamagedRefunds,
  noDuplicates,
  reconciles,
  signedOff,
  succeededRun,
  type ScenarioCheck,
} from './checks.ts';
import type { Scenario } from './scenarios.ts';
import { manualSteps } from './scenarioSteps.ts';

const BUG = { from: '2026-06-20', to: '2026-07-11' };
const OPEN = { from: '2026-07-01', to: '2026-07-11' };
const CLOSED_FROM = '2026-06-20';
const CLOSED_TO = '2026-07-01';

const JUNE_SQL = (table: string) =>
  `select md5(string_agg(t::text, ',' order by t::text)) as h, count(*)::int as n from ${table} t
    where refund_date >= :from and refund_date < :to`;

function dryRunNamedThem(store: Store, since: string): ScenarioCheck {
  const named = store.evidence.list({ kind: 'dry-run' }).some((e) => {
    const flags = (e.body as { flags?: { key: string; code: string }[] } | null)?.flags ?? [];
    return e.createdAt >= since && flags.some((f) => f.code === 'closed-partition' && f.key >= CLOSED_FROM && f.key < CLOSED_TO);
  });
  return {
    name: 'a dry run named the closed (invoiced) days',
    ok: named,
    detail: named
      ? "a dry run on record flagged June's invoiced days: overwrite not allowed"
      : 'no dry run since loading flagged the invoiced days: dry-run the whole range first and read its questions',
  };
}

function closedDaysNotWritten(store: Store, since: string): ScenarioCheck {
  const wrote = store.runs
    .list({ job: REFUNDS.job, limit: 1000 })
    .filter((r) => r.createdAt >= since)
    .flatMap((r) =>
      store.partitions
        .list(r.runId)
        .filter((p) => p.status === 'published' && p.key >= CLOSED_FROM && p.key < CLOSED_TO)
        .map((p) => `${p.key} by ${r.runId}`),
    );
  return {
    name: 'no run rewrote an invoiced day',
    ok: wrote.length === 0,
    detail:
      wrote.length === 0
        ? "June's invoiced days were left alone: finance corrects them with a credit note"
        : `${wrote.slice(0, 3).join(', ')}${wrote.length > 3 ? ` and ${wrote.length - 3} more` : ''}: an invoiced day was rewritten — the mart no longer matches what the partner was invoiced`,
  };
}

export const CLOSED_SCENARIO: Scenario = {
  id: 9,
  slug: 'closed-billing-periods',
  title: 'The range crosses closed billing periods',
  story:
    "Refund reasons were mapped wrong from 2026-06-20 to 2026-07-10. June's refunds were invoiced to the payment partner on July 1st: those days are closed (the workspace lists them in billing.invoiced_days). Finance will correct June with a credit note; fix what is still open.",
  job: REFUNDS.job,
  range: BUG,
  steps: [
    'run-backfill refund-reason-daily --from 2026-06-20 --to 2026-07-11 --run-id bf-closed-whole --dry-run   (read its questions: which days may not be overwritten?)',
    ...manualSteps({ job: REFUNDS.job, from: OPEN.from, to: OPEN.to, runId: 'bf-closed-july', flags: '' }),
  ],
  fixed:
    "Every refund day from 2026-07-01 to 2026-07-10 equals a recomputation from the source (a run with its dry run and a lead's sign-off), June's invoiced days are exactly as invoiced, a dry run named them, and no run rewrote them.",
  async inject({ client }) {
    await mislabelDamagedRefunds(client, '2026-06-20', '2026-07-11');
    await client.query(
      `insert into billing.invoiced_days select d::date, 'partner-2026-06' from generate_series(date '2026-06-01', date '2026-06-30', interval '1 day') d`,
    );
    await client.query(`create schema if not exists training`);
    await client.query(
      `create table training.invoiced_refunds as select * from mart.refund_daily where refund_date >= '${CLOSED_FROM}' and refund_date < '${CLOSED_TO}'`,
    );
  },
  async check({ client, store, since }) {
    const range = { from: CLOSED_FROM, to: CLOSED_TO };
    const now = (await query<{ h: string; n: number }>(client, JUNE_SQL('mart.refund_daily'), range)).rows[0];
    const invoiced = (await query<{ h: string; n: number }>(client, JUNE_SQL('training.invoiced_refunds'), range)).rows[0];
    const same = now?.h === invoiced?.h && now?.n === invoiced?.n;
    const run = succeededRun(store, REFUNDS.job, OPEN, since);
    return [
      await reconciles(client, REFUNDS.table, OPEN),
      {
        name: "June's invoiced days are as invoiced",
        ok: same,
        detail: same
          ? `${invoiced?.n ?? 0} rows of 2026-06-20 to 2026-06-30 unchanged`
          : 'the invoiced days changed since they were invoiced',
      },
      await noDuplicates(client, REFUNDS.table, 'refund_date, reason'),
      run,
      ...evidenceOf(store, run.planHash, run.runId, [{ kind: 'dry-run', label: 'dry run (impact scope)' }]),
      signedOff(store, run.planHash),
      dryRunNamedThem(store, since),
      closedDaysNotWritten(store, since),
    ];
  },
};
