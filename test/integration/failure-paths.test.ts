/**
 * Every failure path closes what it opened (issue 13 item 5): a command that fails after it
 * has connected — in prepare, half way through a check, in the middle of a run — exits with
 * the documented code, says what the server said and which field of the job caused it (no
 * stack trace), ends by itself, and leaves no session of ours on the server
 * (pg_stat_activity) and nothing written.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrderMart, orderedPartitionMd5, seedOrders } from '../support/dataset.ts';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, orderMartJob, pgConfig, startCli, type CliResult, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;
const RANGE = ['--from', '2026-05-01', '--to', '2026-05-04'];

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'failpaths');
  await seedOrders(db.client, { from: '2026-05-01', days: 3, ordersPerDay: 20, seed: 5 });
  await createOrderMart(db.client);
  ws = makeWorkspace('failpaths', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
});

afterAll(async () => {
  await db?.drop();
});

/** The CLI must end by itself: a process still running after 60 s is a hang, and fails the test. */
async function run(args: string[]): Promise<CliResult> {
  const { child, done } = startCli(ws, args);
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const result = await done;
  clearTimeout(timer);
  expect(result.signal, `hung: ${args.join(' ')}`).toBeNull();
  return result;
}

async function ourSessions(): Promise<number> {
  for (let i = 0; ; i++) {
    const r = await db.client.query(
      `select count(*)::int as n from pg_stat_activity where datname = $1 and application_name like 'backfill-runbook%'`,
      [db.name],
    );
    const n = (r.rows[0] as { n: number }).n;
    if (n === 0 || i >= 50) return n;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const targetMd5 = (): Promise<string> => orderedPartitionMd5(db.client, 'mart.mart_order_daily', 'order_date', '2026-01-01', '2027-01-01');

describe('a command that fails after connecting', () => {
  const cases: { name: string; job: string; args: (job: string) => string[]; code: number; message: RegExp }[] = [
    {
      name: 'dry run: a source query over a table that does not exist',
      job: orderMartJob({ billing: false }).replace('from orders\n    where paid_at', 'from no_such_orders\n    where paid_at'),
      args: (job) => [job, ...RANGE, '--dry-run'],
      code: 2,
      message: /source\.query: the server refused the SQL: SQLSTATE 42P01: relation "no_such_orders" does not exist/,
    },
    {
      name: 'prove: the same',
      job: orderMartJob({ billing: false }).replace('from orders\n    where paid_at', 'from no_such_orders\n    where paid_at'),
      args: (job) => ['prove', job, '--partition', '2026-05-01'],
      code: 2,
      message: /source\.query: the server refused the SQL: SQLSTATE 42P01/,
    },
    {
      name: 'dry run: a rule naming a column the target lacks',
      job: orderMartJob({ billing: false }).replace(
        'sum(paid_amount) as amount from mart.mart_order_daily',
        'sum(no_amount) as amount from mart.mart_order_daily',
      ),
      args: (job) => [job, ...RANGE, '--dry-run'],
      code: 2,
      message: /validation\[0\]\.target: the server refused the SQL: SQLSTATE 42703: column "no_amount" does not exist/,
    },
    {
      name: 'check: a quality rule that fails while it runs (division by zero)',
      job: orderMartJob({
        billing: false,
        extra:
          'quality:\n  - { kind: custom_sql, name: ratio, sql: "select count(*) / (count(*) - count(*)) from orders", max: 1, severity: fail }\n',
      }),
      args: (job) => ['check', job, ...RANGE],
      code: 2,
      message: /quality\[0\]\.sql: the server refused the SQL: SQLSTATE 22012: division by zero/,
    },
    {
      name: 'run: a rule that fails on the first partition, while it is being written',
      job: orderMartJob({ billing: false }).replace(
        'select coalesce(sum(orders), 0) as rows',
        'select coalesce(sum(orders), 0) / (count(*) - count(*)) as rows',
      ),
      args: (job) => [job, ...RANGE, '--run-id', 'failpath-run'],
      code: 2,
      message: /validation\[0\]\.target: the server refused the SQL: SQLSTATE 22012: division by zero/,
    },
    {
      name: 'snapshot: a target table that does not exist',
      job: orderMartJob({ billing: false, table: 'mart.no_such_mart' }),
      args: (job) => ['snapshot', job, ...RANGE, '--run-id', 'failpath-snap'],
      code: 2,
      message: /target\.table.*no_such_mart/,
    },
  ];

  it.each(cases)('$name: exit $code, the server’s words and the field, no session left', async ({ job, args, code, message }) => {
    const name = `fail-${cases.findIndex((c) => c.job === job && c.args === args)}`;
    ws.writeJob(name, job.replace(/^name: .*$/m, `name: ${name}`));
    const before = await targetMd5();
    const r = await run(args(name));
    // A refusal goes to stderr; a run that started reports its outcome with its progress, on stdout.
    expect(`${r.stderr}${r.stdout}`).toMatch(message);
    expect(`${r.stderr}${r.stdout}`).not.toMatch(/\n\s+at /);
    expect(r.code, r.stderr).toBe(code);
    expect(await ourSessions()).toBe(0);
    expect(await targetMd5()).toBe(before);
  });
});
