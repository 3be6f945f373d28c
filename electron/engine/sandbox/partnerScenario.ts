/**
 * Scenario 7: a partner's CSV drop with the wrong delimiter. The payment partner drops one
 * settlement file a day into the lake; for two days its export tool wrote ";" instead of ","
 * (a locale switched, then switched back), so the nightly load refused both days and
 * partner.settlements has no rows for them. The trainee reloads exactly those days with the
 * job that reads ";" — external partner data, so the whole manual checklist — and "fixed"
 * compares every reloaded row with the partner's data, and checks that the other days and the
 * partner's drop itself were left as they were.
 */
import type { S3Bucket } from '../targets/s3/bucket.ts';
import { manifestKeyOf } from '../targets/s3/paths.ts';
import { query, type PgClient } from '../targets/postgres/connect.ts';
import type { Run, Store } from '../store/index.ts';
import { evidenceOf, signedOff, snapshotTaken, type ScenarioCheck } from './checks.ts';
import { NO_LAKE } from './lakeScenario.ts';
import { PARTNER_COLUMNS, PARTNER_DAYS, PARTNER_FROM, PARTNER_ROWS_SQL, nextDay, partnerRows, type PartnerRow } from './seed.ts';
import type { Scenario } from './scenarios.ts';

const NIGHTLY = 'partner-settlements';
const SEMICOLON = 'partner-settlements-semicolon';
const TABLE = 'partner.settlements';
const DAYS = Array.from({ length: PARTNER_DAYS }, (_, i) => nextDay(PARTNER_FROM, i));
const BAD = ['2026-07-06', '2026-07-07'];
const RANGE = { from: BAD[0] ?? '', to: nextDay(BAD.at(-1) ?? '') };
const RUN_ID = 'partner-reload-2026-07-06';
const stem = (day: string): string => `partner/settlements/dt=${day}/`;
const fileKey = (day: string): string => `${stem(day)}settlements_${day.replaceAll('-', '')}.csv`;

/** A day's file as the partner sent it: ";" on the bad days, "," on every other. */
function dropOf(day: string, rows: readonly PartnerRow[]): string {
  const delimiter = BAD.includes(day) ? ';' : ',';
  const line = (values: readonly string[]): string => values.join(delimiter);
  return `${[line(PARTNER_COLUMNS), ...rows.map((r) => line(PARTNER_COLUMNS.map((c) => r[c])))].join('\n')}\n`;
}

async function inject({ client, lake }: { client: PgClient; lake: S3Bucket | null }): Promise<void> {
  if (!lake) throw new Error(NO_LAKE);
  await lake.deleteKeys((await lake.listAll('')).map((o) => o.key));
  for (const day of DAYS) {
    await lake.put(fileKey(day), dropOf(day, await partnerRows(client, day)), 'text/csv');
    await lake.put(manifestKeyOf(stem(day)), Buffer.alloc(0), 'text/plain'); // the partner's "done" marker
  }
  // The nightly load refused both days (the header read as one column): nothing was loaded.
  await query(
    client,
    `DELETE FROM partner.settlements WHERE settlement_date >= CAST(:from AS date) AND settlement_date < CAST(:to AS date)`,
    RANGE,
  );
}

interface DayComparison {
  rows: number;
  expected: number;
  missing: number;
  extra: number;
  wrong: number;
  firstWrong: string | null;
}

/** The table's rows of a day against the partner's, row by row, by transaction id. */
async function compareDay(client: PgClient, day: string): Promise<DayComparison> {
  const r = await query<DayComparison>(
    client,
    `WITH want AS (${PARTNER_ROWS_SQL}),
          got AS (
            SELECT to_char(settlement_date, 'YYYY-MM-DD') AS settlement_date, transaction_id, order_id::text AS order_id,
                   to_char(captured_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS captured_at, card_brand,
                   gross_amount::text AS gross_amount, fee_amount::text AS fee_amount, net_amount::text AS net_amount, currency
              FROM partner.settlements
             WHERE settlement_date >= CAST(:from AS date) AND settlement_date < CAST(:to AS date)),
          pairs AS (
            SELECT w.transaction_id AS want_id, g.transaction_id AS got_id,
                   w.transaction_id IS NOT NULL AND g.transaction_id IS NOT NULL AND row(w.*) IS DISTINCT FROM row(g.*) AS wrong
              FROM want w FULL JOIN got g ON g.transaction_id = w.transaction_id)
     SELECT count(got_id)::int AS rows, count(want_id)::int AS expected,
            count(*) FILTER (WHERE got_id IS NULL)::int AS missing, count(*) FILTER (WHERE want_id IS NULL)::int AS extra,
            count(*) FILTER (WHERE wrong)::int AS wrong, min(want_id) FILTER (WHERE wrong) AS "firstWrong"
       FROM pairs`,
    { from: day, to: nextDay(day) },
  );
  const c = r.rows[0];
  if (!c) throw new Error(`no comparison for ${day}`);
  return c;
}

const same = (c: DayComparison): boolean => c.missing === 0 && c.extra === 0 && c.wrong === 0;

function differences(c: DayComparison): string {
  return [
    c.missing > 0 ? `${c.missing} of the partner's ${c.expected} rows missing` : '',
    c.extra > 0 ? `${c.extra} not in the partner's file` : '',
    c.wrong > 0 ? `${c.wrong} with a value that differs (first: ${c.firstWrong ?? '?'})` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

/** Which run last published each partition of the table (the target's own marks: all since the load, which drops them). */
async function marksOf(client: PgClient): Promise<Map<string, string>> {
  const exists = await query<{ t: string | null }>(client, `SELECT to_regclass('backfill_runbook.partition_marks')::text AS t`);
  if (!exists.rows[0]?.t) return new Map();
  const r = await query<{ partition_key: string; run_id: string }>(
    client,
    'SELECT partition_key, run_id FROM backfill_runbook.partition_marks WHERE target_table = :table',
    { table: TABLE },
  );
  return new Map(r.rows.map((m) => [m.partition_key, m.run_id]));
}

async function reloadedDay(client: PgClient, day: string, marks: Map<string, string>): Promise<ScenarioCheck> {
  const c = await compareDay(client, day);
  const name = `${day} reloaded from the partner's file`;
  if (same(c)) return { name, ok: true, detail: `${c.rows} rows, each equal to the partner's row (run ${marks.get(day) ?? '?'})` };
  if (c.rows === 0) {
    const other = BAD.find((d) => d !== day && marks.has(d));
    return {
      name,
      ok: false,
      detail: `no rows for ${day}; the partner's file has ${c.expected}. ${
        other ? `Only ${other} was reloaded: --to is exclusive, so a run over both days ends --to ${RANGE.to}` : 'Not reloaded yet'
      } (run-backfill ${SEMICOLON} --from ${RANGE.from} --to ${RANGE.to})`,
    };
  }
  return { name, ok: false, detail: `${c.rows} rows, but ${differences(c)}` };
}

async function otherDaysAlone(client: PgClient, marks: Map<string, string>): Promise<ScenarioCheck> {
  const others = DAYS.filter((d) => !BAD.includes(d));
  const problems: string[] = [];
  for (const day of others) {
    const c = await compareDay(client, day);
    if (marks.has(day)) problems.push(`${day} rewritten by run ${marks.get(day) ?? ''}`);
    else if (!same(c)) problems.push(`${day}: ${differences(c)}`);
  }
  return {
    name: `the other ${others.length} days were left alone`,
    ok: problems.length === 0,
    detail:
      problems.length === 0
        ? `${others[0] ?? ''} … ${others.at(-1) ?? ''} but ${BAD.join(' and ')} hold the partner's rows as the nightly load left them; none rewritten`
        : `${problems.join('; ')} — only ${BAD.join(' and ')} were to be reloaded`,
  };
}

/** The drop is the record of what the partner sent: reload from it, never edit it or add files beside it. */
async function dropAsItArrived(client: PgClient, lake: S3Bucket): Promise<ScenarioCheck> {
  const found = new Map((await lake.listAll('partner/')).map((o) => [o.key, o]));
  const problems: string[] = [];
  for (const day of DAYS) {
    const text = await lake.getText(fileKey(day));
    if (text === null) problems.push(`${fileKey(day)} is gone`);
    else if (text !== dropOf(day, await partnerRows(client, day))) problems.push(`${fileKey(day)} was changed`);
    found.delete(fileKey(day));
    if (!found.delete(manifestKeyOf(stem(day)))) problems.push(`${manifestKeyOf(stem(day))} is gone`);
  }
  const added = [...found.keys()];
  if (added.length > 0) problems.push(`${added.length} object(s) added (${added.slice(0, 2).join(', ')}): the nightly load reads them too`);
  return {
    name: "the partner's drop was left as it arrived",
    ok: problems.length === 0,
    detail:
      problems.length === 0
        ? `${DAYS.length} files under ${lake.url('partner/settlements/')}, byte for byte as the partner sent them`
        : problems.slice(0, 3).join('; '),
  };
}

/** A plan to reload the two days: its run once executed; before that, its dry run shows the progress made. */
interface Attempt {
  runId: string;
  planHash: string;
  run: Run | undefined;
}

/** True when the job (as last saved in the ledger) loads partner.settlements: the trainee may have written their own. */
function loadsSettlements(store: Store, jobName: string): boolean {
  const target = (store.jobs.get(jobName)?.definition as { target?: { table?: unknown } } | undefined)?.target;
  return target?.table === TABLE;
}

const coversRange = (from: string | null | undefined, to: string | null | undefined): boolean =>
  (from ?? '') <= RANGE.from && (to ?? '') >= RANGE.to;

/**
 * The runs that published the two days (by the target's marks); else the latest run over them
 * since the load; else the latest plan over them with a dry run on record since the load.
 */
function reloadAttempts(store: Store, since: string, marks: Map<string, string>): Attempt[] {
  const published = [...new Set(BAD.flatMap((d) => marks.get(d) ?? []))].flatMap((id) => store.runs.get(id) ?? []);
  if (published.length > 0) return published.map((run) => ({ runId: run.runId, planHash: run.planHash, run }));
  const run = store.runs
    .list({ limit: 1000 })
    .find((r) => r.createdAt >= since && loadsSettlements(store, r.jobName) && coversRange(r.rangeFrom, r.rangeTo));
  if (run) return [{ runId: run.runId, planHash: run.planHash, run }];
  const planned = store.evidence
    .list({ kind: 'dry-run' })
    .reverse()
    .flatMap((e) => {
      const plan = e.createdAt >= since && e.planHash ? store.plans.get(e.planHash) : undefined;
      const range = (plan?.plan as { range?: { from?: string; to?: string } } | undefined)?.range;
      return plan && loadsSettlements(store, plan.jobName) && coversRange(range?.from, range?.to) ? [plan] : [];
    })[0];
  return planned ? [{ runId: planned.requestId, planHash: planned.planHash, run: undefined }] : [];
}

/** One check over every reload attempt: it holds when it holds for each. */
function forEach(attempts: Attempt[], name: string, one: (a: Attempt) => ScenarioCheck): ScenarioCheck {
  if (attempts.length === 0) return { name, ok: false, detail: `no dry run or run over ${RANGE.from} → ${RANGE.to} yet` };
  const results = attempts.map((a) => ({ a, check: one(a) }));
  const shown = results.find((r) => !r.check.ok) ?? results[0];
  const prefix = attempts.length > 1 && shown ? `run ${shown.a.runId}: ` : '';
  return { name, ok: results.every((r) => r.check.ok), detail: `${prefix}${shown?.check.detail ?? ''}` };
}

function runSucceeded({ runId, run }: Attempt): ScenarioCheck {
  const ok = run?.status === 'succeeded';
  const what = run
    ? `run ${runId} (${run.jobName}, ${run.rangeFrom ?? '?'} → ${run.rangeTo ?? '?'}) ${
        ok ? `published ${run.partitionsPublished} partition(s) and reconciled` : `is ${run.status}`
      }`
    : `plan ${runId} has its dry run but was not executed yet`;
  return { name: 'the reload run succeeded', ok, detail: what };
}

async function check({ client, lake, store, since }: Parameters<Scenario['check']>[0]): Promise<ScenarioCheck[]> {
  if (!lake) return [{ name: 'the sandbox has a lake', ok: false, detail: NO_LAKE }];
  const marks = await marksOf(client);
  const checks: ScenarioCheck[] = [];
  for (const day of BAD) checks.push(await reloadedDay(client, day, marks));
  checks.push(await otherDaysAlone(client, marks), await dropAsItArrived(client, lake));
  const attempts = reloadAttempts(store, since, marks);
  const evidence = (kind: string, label: string, byRun?: boolean) => (a: Attempt) =>
    evidenceOf(store, a.planHash, a.runId, [{ kind, label, byRun }])[0] ?? { name: label, ok: false, detail: '' };
  checks.push(
    forEach(attempts, 'the reload run succeeded', runSucceeded),
    forEach(attempts, 'evidence: dry run (impact scope)', evidence('dry-run', 'dry run (impact scope)')),
    forEach(attempts, 'evidence: snapshot backup', (a) => snapshotTaken(store, a.runId, since)),
    forEach(attempts, 'evidence: lead sign-off', (a) => signedOff(store, a.planHash)),
    forEach(attempts, 'evidence: row-count comparison', evidence('reconciliation', 'row-count comparison', true)),
  );
  return checks;
}

export const PARTNER_SCENARIO: Scenario = {
  id: 7,
  slug: 'partner-csv-delimiter',
  title: "A partner's CSV drop arrived with the wrong delimiter",
  story: `The payment partner drops one settlement file a day under partner/settlements/dt=YYYY-MM-DD/, and the nightly load (${NIGHTLY}) copies it into ${TABLE}. For ${BAD.join(' and ')} their export tool ran in its European locale and separated the columns with ";" — the nightly load refused both days, and the table has no rows for them. Finance closes July on this table. The partner's files are right but for the delimiter: reload exactly those two days from them, without touching the other days or the files. External partner data: the whole manual checklist applies.`,
  job: NIGHTLY,
  range: RANGE,
  steps: [
    `run-backfill ${NIGHTLY} --from ${RANGE.from} --to ${RANGE.to} --dry-run`,
    `run-backfill ${SEMICOLON} --from ${RANGE.from} --to ${RANGE.to} --run-id ${RUN_ID} --dry-run`,
    `run-backfill snapshot ${SEMICOLON} --from ${RANGE.from} --to ${RANGE.to} --run-id ${RUN_ID}`,
    `run-backfill signoff request --run-id ${RUN_ID} --out ${RUN_ID}.request.json`,
    `run-backfill sign ${RUN_ID}.request.json --identity sandbox-lead --out ${RUN_ID}.sig.json`,
    `run-backfill signoff import ${RUN_ID}.sig.json`,
    `run-backfill ${SEMICOLON} --from ${RANGE.from} --to ${RANGE.to} --run-id ${RUN_ID}`,
    `run-backfill --resume --run-id ${RUN_ID}`,
  ],
  fixed: `Every row of ${BAD.join(' and ')} in ${TABLE} equals the partner's row, the other days and the partner's files are untouched, and the reload run carries its dry run, snapshot, lead sign-off and row-count comparison.`,
  inject,
  check,
};
