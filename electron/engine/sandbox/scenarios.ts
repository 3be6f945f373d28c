/**
 * Training scenarios: each loads the sandbox warehouse with a defect to repair, says what
 * "fixed" means, and checks it at the end — target reconciles, evidence complete, nothing
 * duplicated — telling the trainee what they missed.
 */
import type { ScenarioView } from '../../../shared/contractTypes.ts';
import type { Store } from '../store/index.ts';
import type { PgClient } from '../targets/postgres/connect.ts';
import type { S3Bucket } from '../targets/s3/bucket.ts';
import {
  ORDERS,
  REFUNDS,
  coveringRuns,
  evidenceOf,
  mislabelDamagedRefunds,
  noDuplicates,
  reconciles,
  resumedAfterStop,
  signedOff,
  snapshotTaken,
  succeededRun,
  type ScenarioCheck,
} from './checks.ts';
import { LAKE_SCENARIO } from './lakeScenario.ts';
import { PARTNER_SCENARIO } from './partnerScenario.ts';
import { PURGED_SCENARIO } from './purgedScenario.ts';
import { CLOSED_SCENARIO } from './closedScenario.ts';
import { seedWarehouse } from './seed.ts';
import { manualSteps, noteStep } from './scenarioSteps.ts';

export type { ScenarioCheck } from './checks.ts';

/** A scenario: what the Training screen lists (shared/contractTypes.ts) and how it is injected and checked. */
export interface Scenario extends ScenarioView {
  inject(env: ScenarioEnv): Promise<void>;
  /** `since`: when the scenario was loaded; runs and evidence from before do not count */
  check(ctx: ScenarioEnv & { store: Store; since: string }): Promise<ScenarioCheck[]>;
}

/** The sandbox's servers: the warehouse (PostgreSQL) and the lake (its S3 bucket), when it has one. */
export interface ScenarioEnv {
  client: PgClient;
  lake: S3Bucket | null;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    id: 1,
    slug: 'refund-reasons',
    title: 'Refund reasons mapped wrong for two months',
    story:
      'From May to June the billing mart counted every "damaged" refund as "other": a mapping bug, now fixed upstream. Finance needs the two months recomputed — billing data, so the whole manual checklist applies.',
    job: REFUNDS.job,
    range: { from: '2026-05-01', to: '2026-07-01' },
    steps: manualSteps({
      job: REFUNDS.job,
      from: '2026-05-01',
      to: '2026-07-01',
      runId: 'bf-refund-reason-daily-2026-05-01_2026-07-01',
      flags: '--sleep-ms 200 --max-row-diff-ratio 0.5',
      check: true,
    }),
    fixed:
      'Every refund day from 2026-05-01 to 2026-06-30 equals a recomputation from the source, nothing is duplicated, and the run carries its sanity check, snapshot, dry run, lead sign-off and reconciliation.',
    async inject({ client }) {
      await mislabelDamagedRefunds(client, '2026-05-01', '2026-07-01');
    },
    async check({ client, store, since }) {
      const run = succeededRun(store, REFUNDS.job, this.range, since);
      return [
        await reconciles(client, REFUNDS.table, this.range),
        await noDuplicates(client, REFUNDS.table, 'refund_date, reason'),
        run,
        ...evidenceOf(store, run.planHash, run.runId, [
          { kind: 'sanity-check', label: 'source sanity check' },
          { kind: 'dry-run', label: 'dry run (impact scope)' },
          { kind: 'reconciliation', label: 'row-count comparison', byRun: true },
        ]),
        snapshotTaken(store, run.runId, since),
        signedOff(store, run.planHash),
      ];
    },
  },
  {
    id: 2,
    slug: 'schema-change-72h',
    title: 'An upstream schema change mis-aggregated 72 hours',
    story:
      'On 2026-07-20 an upstream change started sending amounts in cents; it was reverted three days later and found five days after that. The order mart holds amounts a hundred times too large for 72 hours.',
    job: ORDERS.job,
    range: { from: '2026-07-20', to: '2026-07-23' },
    steps: manualSteps({
      job: ORDERS.job,
      from: '2026-07-20',
      to: '2026-07-23',
      runId: 'bf-order-daily-mart-2026-07-20_2026-07-23',
      flags: '',
    }),
    fixed: 'The three days equal a recomputation from the source; the days around them were not touched.',
    async inject({ client }) {
      await client.query(
        `update mart.mart_order_daily set paid_amount = paid_amount * 100 where order_date >= '2026-07-20' and order_date < '2026-07-23'`,
      );
    },
    async check({ client, store, since }) {
      return [
        await reconciles(client, ORDERS.table, this.range),
        await reconciles(client, ORDERS.table, { from: '2026-07-15', to: '2026-07-28' }),
        await noDuplicates(client, ORDERS.table, 'order_date, customer_id'),
        succeededRun(store, ORDERS.job, this.range, since),
      ];
    },
  },
  LAKE_SCENARIO,
  {
    id: 4,
    slug: 'contaminated-source',
    title: 'The source is still contaminated',
    story:
      'Refund reasons for 2026-06-10 arrive empty: the upstream reload is not finished. Recomputing now would write the same wrong numbers again. The sanity gate must stop you.',
    job: REFUNDS.job,
    range: { from: '2026-06-01', to: '2026-06-15' },
    steps: ['run-backfill check refund-reason-daily --from 2026-06-01 --to 2026-06-15', '(read why it fails; do NOT force the run)'],
    fixed: 'The sanity gate refused the run (a failing check on record) and the mart was not rewritten from the contaminated source.',
    async inject({ client }) {
      await client.query(`alter table refunds alter column reason_code drop not null`);
      await client.query(`update refunds set reason_code = null where refunded_at >= '2026-06-10' and refunded_at < '2026-06-11'`);
    },
    check({ store, since }) {
      const blocked = store.evidence
        .list({ kind: 'sanity-check' })
        .some((e) => e.createdAt >= since && (e.body as { blocked?: boolean }).blocked === true);
      const written = coveringRuns(store, REFUNDS.job, this.range, since).some((r) => r.partitionsPublished > 0);
      return Promise.resolve([
        {
          name: 'the sanity gate stopped the run',
          ok: blocked,
          detail: blocked
            ? 'a failing source sanity check is on record'
            : 'no failing sanity check on record: run `run-backfill check` first',
        },
        {
          name: 'nothing was recomputed from the contaminated source',
          ok: !written,
          detail: written ? 'a run published partitions over the contaminated range' : 'no partition was written',
        },
      ]);
    },
  },
  {
    id: 5,
    slug: 'crash-half-way',
    title: 'The run crashes half way',
    story:
      'A month of the order mart needs recomputing. Half way through, the laptop dies (kill the process, or Ctrl-C twice). Resume without losing or doubling a partition.',
    job: ORDERS.job,
    range: { from: '2026-06-01', to: '2026-07-01' },
    steps: [
      ...manualSteps({
        job: ORDERS.job,
        from: '2026-06-01',
        to: '2026-07-01',
        runId: 'bf-order-daily-mart-2026-06-01_2026-07-01',
        flags: '--sleep-ms 500',
        note: false,
      }),
      '(kill it part way: Ctrl-C twice, or kill the process)',
      'run-backfill --resume --run-id bf-order-daily-mart-2026-06-01_2026-07-01',
      noteStep('bf-order-daily-mart-2026-06-01_2026-07-01'),
    ],
    fixed: 'The month equals a recomputation from the source, nothing is duplicated, and the same run was stopped and resumed.',
    async inject({ client }) {
      await client.query(
        `update mart.mart_order_daily set orders = orders + 1 where order_date >= '2026-06-01' and order_date < '2026-07-01'`,
      );
    },
    async check({ client, store, since }) {
      const run = succeededRun(store, ORDERS.job, this.range, since);
      return [
        await reconciles(client, ORDERS.table, this.range),
        await noDuplicates(client, ORDERS.table, 'order_date, customer_id'),
        run,
        resumedAfterStop(store, run.runId),
      ];
    },
  },
  {
    id: 6,
    slug: 'production-load',
    title: 'Production load: lock waits appear mid-run',
    story:
      'A migration wants an exclusive lock on the mart while you backfill it (`run-backfill sandbox traffic` plays it). With --max-lock-wait-ms set, the run must halt instead of blocking production, then finish later.',
    job: ORDERS.job,
    range: { from: '2026-07-01', to: '2026-07-11' },
    steps: [
      ...manualSteps({
        job: ORDERS.job,
        from: '2026-07-01',
        to: '2026-07-11',
        runId: 'bf-order-daily-mart-2026-07-01_2026-07-11',
        flags: '--max-lock-wait-ms 500 --sleep-ms 1000',
        note: false,
      }),
      'run-backfill sandbox traffic --hold 10   (in another terminal, while the run runs)',
      'run-backfill --resume --run-id bf-order-daily-mart-2026-07-01_2026-07-11',
      noteStep('bf-order-daily-mart-2026-07-01_2026-07-11'),
    ],
    fixed: 'The run halted on the lock-wait condition instead of blocking the migration, then resumed, and the range reconciles.',
    async inject({ client }) {
      await client.query(`update mart.mart_order_daily set paid_amount = 0 where order_date >= '2026-07-01' and order_date < '2026-07-11'`);
    },
    async check({ client, store, since }) {
      const run = succeededRun(store, ORDERS.job, this.range, since);
      return [await reconciles(client, ORDERS.table, this.range), run, resumedAfterStop(store, run.runId, 'lock-wait')];
    },
  },
  PARTNER_SCENARIO,
  PURGED_SCENARIO,
  CLOSED_SCENARIO,
];

export function scenario(id: number): Scenario {
  const found = SCENARIOS.find((s) => s.id === id);
  if (!found) throw new Error(`no scenario ${id}: choose one of ${SCENARIOS.map((s) => s.id).join(', ')}`);
  return found;
}

/** Puts the warehouse back to its generated state, then injects the scenario's defect. */
export async function loadScenario(env: ScenarioEnv, id: number): Promise<Scenario> {
  const { client } = env;
  const s = scenario(id);
  if (s.unavailable) throw new Error(`scenario ${id} is not available in this build: ${s.unavailable}`);
  await client.query(
    'DROP SCHEMA IF EXISTS mart CASCADE; DROP SCHEMA IF EXISTS partner CASCADE; DROP SCHEMA IF EXISTS billing CASCADE; DROP SCHEMA IF EXISTS training CASCADE; DROP SCHEMA IF EXISTS backfill_runbook CASCADE; DROP SCHEMA IF EXISTS backfill_runbook_snapshots CASCADE; DROP VIEW IF EXISTS refund_timeline; DROP TABLE IF EXISTS refunds, refund_reasons, orders, app_events CASCADE',
  );
  await seedWarehouse(client);
  await s.inject(env);
  return s;
}
