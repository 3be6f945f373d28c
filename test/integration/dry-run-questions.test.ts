/**
 * The dry run's questions (issue 15, source article 004) on a real PostgreSQL: for each red
 * flag, one scenario that raises it and one that does not, checked through the CLI's exit code
 * and `--json` and through the app's own calls (its dry-run view, and its refusal to start).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RedFlag } from '../../shared/redFlags.ts';
import type { PartitionFlag } from '../../shared/partitionFlags.ts';
import type { RunbookService } from '../../electron/engine/runbook/service.ts';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { appDryRun, appRefusal, appService, cliJson } from '../support/app.ts';
import { createTestDatabase } from '../support/pg.ts';
import { signOff } from '../support/signoff.ts';
import { makeWorkspace, orderMartJob, pgConfig, runCli, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;
let app: RunbookService;

interface DryRunLine {
  redFlags: RedFlag[];
  partitions: { partition: { key: string }; flags: PartitionFlag[]; ms: number }[];
  estimate: { ms: number; entersWindowAt: string | null } | null;
}

const QUESTIONS = new Set(['abnormal-size', 'source-gone', 'retention', 'closed-partition', 'peak-overlap', 'same-code']);
/** The dry run's questions' answers as `code:severity` (the plan's own flags, such as no-stop-conditions, left out). */
const codes = (flags: readonly RedFlag[]) => flags.filter((f) => QUESTIONS.has(f.code)).map((f) => `${f.code}:${f.severity}`);
const flagOf = (flags: readonly RedFlag[], code: string) => flags.find((f) => f.code === code);

async function dryRunCli(args: string[]) {
  const r = await cliJson(ws, [...args, '--dry-run']);
  const dry = r.of<DryRunLine>('dry-run');
  expect(dry, r.stderr).toBeDefined();
  return { code: r.code, stderr: r.stderr, dry: dry as DryRunLine };
}

/** Days from 2026-05-DD 00:00 UTC to now, so a retention ends inside that day whenever the test runs. */
const daysSince = (day: string) => Math.floor((Date.now() - Date.parse(`${day}T00:00:00Z`)) / 86_400_000);

const hhmm = (hoursFromNow: number) => new Date(Date.now() + hoursFromNow * 3_600_000).toISOString().slice(11, 16);

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'questions');
  await seedWarehouse(db.client);
  ws = makeWorkspace('questions', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(
    `${pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } })}closed_partitions:
  - targets: [mart.mart_order_daily]
    reason: first quarter reported to the board
    range: { from: 2026-03-01, to: 2026-04-01 }
`,
  );
  ws.writeJob('orders-manual', orderMartJob({ name: 'orders-manual', billing: true }));
  ws.writeJob('orders-semi', orderMartJob({ name: 'orders-semi', billing: false }));
  app = appService(ws, { WAREHOUSE_PASSWORD: db.password });
});

afterAll(async () => {
  await app?.close();
  await db?.drop();
});

describe('abnormal size', () => {
  beforeAll(async () => {
    // 2,000 extra orders from new customers on one day: about six times its neighbours' groups.
    await db.client.query(
      `insert into orders select 900000000 + g, 100000 + g, timestamptz '2026-05-20 12:00:00+00', 10, 'paid' from generate_series(1, 2000) g`,
    );
  });

  it('raised: blocks a manual-tier plan in the CLI (exit 4) and in the app, naming the partition', async () => {
    const { code, dry } = await dryRunCli(['orders-manual', '--from', '2026-05-18', '--to', '2026-05-23', '--run-id', 'size-1']);
    expect(code).toBe(4);
    const flag = flagOf(dry.redFlags, 'abnormal-size');
    expect(flag).toMatchObject({ severity: 'block', partitions: ['2026-05-20'] });
    const row = dry.partitions.find((p) => p.partition.key === '2026-05-20');
    expect(row?.flags.map((f) => f.code)).toEqual(['abnormal-size']);
    expect(row?.flags[0]?.detail).toMatch(/predicted \d+ rows where its neighbours predict about \d+/);

    // The app: the same answer in its dry-run view, and a refusal to start even once a lead signed.
    const view = await appDryRun(app, {
      request_id: 'size-app',
      job: 'orders-manual',
      range: { from: '2026-05-18', to: '2026-05-23' },
      write_mode: 'overwrite-partition',
    });
    expect(codes(view.redFlags)).toContain('abnormal-size:block');
    expect(view.rows.find((r) => r.key === '2026-05-20')?.flags[0]).toMatchObject({ code: 'abnormal-size', severity: 'block' });
    await signOff(ws, 'size-app');
    const refused = await appRefusal(() => app.run.start({ runId: 'size-app' }));
    expect(
      refused.reasons.some((r) => r.startsWith('red flag abnormal-size: 1 partition(s) with an abnormal predicted size: 2026-05-20')),
    ).toBe(true);
  });

  it('raised but acknowledged in the plan: a warning, the dry run exits 0', async () => {
    const plan = ws.writeFile(
      'size-ack.yaml',
      `request_id: size-ack
job: orders-manual
range: { from: 2026-05-18, to: 2026-05-23 }
write_mode: overwrite-partition
acknowledge:
  - { flag: abnormal-size, reason: a marketing campaign brought 2000 new customers that day, partitions: ['2026-05-20'] }
`,
    );
    const { code, dry } = await dryRunCli(['--plan', plan]);
    expect(code).toBe(0);
    expect(flagOf(dry.redFlags, 'abnormal-size')?.severity).toBe('warn');
    expect(flagOf(dry.redFlags, 'abnormal-size')?.message).toContain('acknowledged in the plan: a marketing campaign');
  });

  it('not raised: an ordinary week', async () => {
    const { code, dry } = await dryRunCli(['orders-manual', '--from', '2026-05-01', '--to', '2026-05-06', '--run-id', 'size-0']);
    expect(code).toBe(0);
    expect(codes(dry.redFlags)).toEqual([]);
    const view = await appDryRun(app, {
      request_id: 'size-app-0',
      job: 'orders-manual',
      range: { from: '2026-05-01', to: '2026-05-06' },
      write_mode: 'overwrite-partition',
    });
    expect(codes(view.redFlags)).toEqual([]);
  });
});

describe('source no longer there', () => {
  beforeAll(async () => {
    // Purged upstream: the orders of two days, with their refunds.
    const purged = `select order_id from orders where paid_at >= '2026-06-10' and paid_at < '2026-06-12'`;
    await db.client.query(`delete from refunds where order_id in (${purged})`);
    await db.client.query(`delete from orders where order_id in (${purged})`);
  });

  it('raised: blocks in every tier — the CLI dry run and run exit 4, the app refuses', async () => {
    const { code, dry } = await dryRunCli(['orders-semi', '--from', '2026-06-08', '--to', '2026-06-14', '--run-id', 'gone-1']);
    expect(code).toBe(4);
    expect(flagOf(dry.redFlags, 'source-gone')).toMatchObject({ severity: 'block', partitions: ['2026-06-10', '2026-06-11'] });
    const run = await runCli(ws, ['orders-semi', '--from', '2026-06-08', '--to', '2026-06-14', '--run-id', 'gone-1']);
    expect(run.code, run.stdout + run.stderr).toBe(4);
    expect(run.stderr).toContain('red flag source-gone: 2 partition(s) whose source is no longer there: 2026-06-10, 2026-06-11');
    const mart = await db.client.query<{ n: string }>(
      `select count(*)::text as n from mart.mart_order_daily where order_date = '2026-06-10'`,
    );
    expect(Number(mart.rows[0]?.n)).toBeGreaterThan(300); // untouched

    const view = await appDryRun(app, {
      request_id: 'gone-app',
      job: 'orders-semi',
      range: { from: '2026-06-08', to: '2026-06-14' },
      write_mode: 'overwrite-partition',
    });
    expect(view.rows.filter((r) => r.flags.some((f) => f.code === 'source-gone')).map((r) => r.key)).toEqual(['2026-06-10', '2026-06-11']);
    const refused = await appRefusal(() => app.run.start({ runId: 'gone-app' }));
    expect(refused.reasons.some((r) => r.startsWith('red flag source-gone:'))).toBe(true);
  });

  it('not raised: a range whose source is whole', async () => {
    const { code, dry } = await dryRunCli(['orders-semi', '--from', '2026-06-01', '--to', '2026-06-05', '--run-id', 'gone-0']);
    expect(code).toBe(0);
    expect(flagOf(dry.redFlags, 'source-gone')).toBeUndefined();
  });
});

describe('retention', () => {
  beforeAll(() => {
    // Personal data kept until the end of 2026-05-04 as of today: May 1–4 are past it.
    ws.writeJob(
      'orders-retained',
      orderMartJob({
        name: 'orders-retained',
        billing: false,
        extra: `retention: { days: ${daysSince('2026-05-04')}, reason: customer rows are deleted after their retention }\n`,
      }),
    );
  });

  it('raised: partitions past the retention are refused in every tier', async () => {
    const { code, dry } = await dryRunCli(['orders-retained', '--from', '2026-05-01', '--to', '2026-05-08', '--run-id', 'ret-1']);
    expect(code).toBe(4);
    expect(flagOf(dry.redFlags, 'retention')).toMatchObject({
      severity: 'block',
      partitions: ['2026-05-01', '2026-05-02', '2026-05-03', '2026-05-04'],
    });
    const view = await appDryRun(app, {
      request_id: 'ret-app',
      job: 'orders-retained',
      range: { from: '2026-05-01', to: '2026-05-08' },
      write_mode: 'overwrite-partition',
    });
    expect(view.rows.find((r) => r.key === '2026-05-04')?.flags[0]?.detail).toContain('customer rows are deleted after their retention');
    const refused = await appRefusal(() => app.run.start({ runId: 'ret-app' }));
    expect(refused.reasons.some((r) => r.startsWith('red flag retention: 4 partition(s) past'))).toBe(true);
  });

  it('not raised: partitions inside the retention', async () => {
    const { code, dry } = await dryRunCli(['orders-retained', '--from', '2026-05-10', '--to', '2026-05-15', '--run-id', 'ret-0']);
    expect(code).toBe(0);
    expect(flagOf(dry.redFlags, 'retention')).toBeUndefined();
  });
});

describe('overwrite not allowed (closed partitions)', () => {
  beforeAll(async () => {
    // The sandbox seed's table of invoiced days (empty until someone invoices).
    await db.client.query(
      `insert into billing.invoiced_days values ('2026-07-01', 'inv-7'), ('2026-07-02', 'inv-7'), ('2026-07-03', 'inv-7')`,
    );
    ws.writeJob(
      'orders-closed',
      orderMartJob({
        name: 'orders-closed',
        billing: false,
        extra: `closed_partitions:
  - reason: invoiced to customers
    probe: select day from billing.invoiced_days where day >= :range_start and day < :range_end
`,
      }),
    );
  });

  it("raised by the job's probe: refused unless listed; listed, a lead must sign off whatever the tier", async () => {
    const range = ['--from', '2026-06-29', '--to', '2026-07-05'];
    const { code, dry } = await dryRunCli(['orders-closed', ...range, '--run-id', 'closed-1']);
    expect(code).toBe(4);
    const flag = flagOf(dry.redFlags, 'closed-partition');
    expect(flag).toMatchObject({ severity: 'block', partitions: ['2026-07-01', '2026-07-02', '2026-07-03'] });
    expect(dry.partitions.find((p) => p.partition.key === '2026-07-02')?.flags[0]?.detail).toContain('invoiced to customers');

    const listed = ['orders-closed', ...range, '--run-id', 'closed-2', '--overwrite-closed', '2026-07-01,2026-07-02,2026-07-03'];
    const allowed = await dryRunCli(listed);
    expect(allowed.code).toBe(0);
    expect(flagOf(allowed.dry.redFlags, 'closed-partition')?.severity).toBe('warn');
    const run = await runCli(ws, listed);
    expect(run.code, run.stdout + run.stderr).toBe(4);
    expect(run.stderr).toContain("lead sign-off: the plan overwrites closed partitions, which needs a lead's sign-off");

    const view = await appDryRun(app, {
      request_id: 'closed-app',
      job: 'orders-closed',
      range: { from: '2026-06-29', to: '2026-07-05' },
      write_mode: 'overwrite-partition',
    });
    expect(codes(view.redFlags)).toContain('closed-partition:block');
    const refused = await appRefusal(() => app.run.start({ runId: 'closed-app' }));
    expect(refused.reasons.some((r) => r.startsWith('red flag closed-partition: 3 closed partition(s)'))).toBe(true);
  });

  it("raised by the workspace's closed range, for every job writing that target", async () => {
    const { code, dry } = await dryRunCli(['orders-semi', '--from', '2026-03-30', '--to', '2026-04-02', '--run-id', 'closed-ws']);
    expect(code).toBe(4);
    expect(flagOf(dry.redFlags, 'closed-partition')?.partitions).toEqual(['2026-03-30', '2026-03-31']);
    expect(dry.partitions[0]?.flags[0]?.detail).toContain('first quarter reported to the board (the workspace config');
  });

  it('not raised: open days', async () => {
    const { code, dry } = await dryRunCli(['orders-closed', '--from', '2026-06-20', '--to', '2026-06-25', '--run-id', 'closed-0']);
    expect(code).toBe(0);
    expect(flagOf(dry.redFlags, 'closed-partition')).toBeUndefined();
  });
});

describe('peak overlap', () => {
  it('raised: an hour between six partitions reaches a window two hours away (manual: block; semi: warn)', async () => {
    const window = `${hhmm(2)}-${hhmm(3)}`;
    const args = ['--from', '2026-05-08', '--to', '2026-05-14', '--sleep-ms', '3600000', '--no-run-window', window];
    const manual = await dryRunCli(['orders-manual', ...args, '--run-id', 'peak-1']);
    expect(manual.code).toBe(4);
    expect(flagOf(manual.dry.redFlags, 'peak-overlap')).toMatchObject({ severity: 'block', field: 'stop.no_run_window' });
    expect(flagOf(manual.dry.redFlags, 'peak-overlap')?.message).toMatch(
      /takes about 5h 0\dm for 6 partition\(s\) and would reach the no-run window/,
    );
    expect(manual.dry.estimate?.ms).toBeGreaterThanOrEqual(5 * 3_600_000);
    expect(manual.dry.estimate?.entersWindowAt).not.toBeNull();
    expect(manual.dry.partitions.every((p) => typeof p.ms === 'number')).toBe(true);
    const semi = await dryRunCli(['orders-semi', ...args, '--run-id', 'peak-2']);
    expect(semi.code).toBe(0);
    expect(flagOf(semi.dry.redFlags, 'peak-overlap')?.severity).toBe('warn');

    const view = await appDryRun(app, {
      request_id: 'peak-app',
      job: 'orders-manual',
      range: { from: '2026-05-08', to: '2026-05-14' },
      write_mode: 'overwrite-partition',
      throttle: { sleep_ms: 3_600_000 },
      stop: { no_run_window: { from: hhmm(2), to: hhmm(3) } },
    });
    expect(codes(view.redFlags)).toContain('peak-overlap:block');
    expect(view.estimate?.entersWindowAt).not.toBeNull();
  });

  it('not raised: the same run with no pause is over long before the window', async () => {
    const window = `${hhmm(3)}-${hhmm(4)}`;
    const { code, dry } = await dryRunCli([
      'orders-manual',
      '--from',
      '2026-05-08',
      '--to',
      '2026-05-14',
      '--no-run-window',
      window,
      '--run-id',
      'peak-0',
    ]);
    expect(code).toBe(0);
    expect(flagOf(dry.redFlags, 'peak-overlap')).toBeUndefined();
    expect(dry.estimate?.entersWindowAt).toBeNull();
  });
});

describe('the same code as the bad data', () => {
  beforeAll(async () => {
    // The partitions were published by a run of this very job version.
    const first = await runCli(ws, ['orders-semi', '--from', '2026-08-01', '--to', '2026-08-04', '--run-id', 'code-first']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
  });

  it('raised: a rerun of the published partitions with the same job hash (manual by its range: block; semi: warn)', async () => {
    const semi = await dryRunCli(['orders-semi', '--from', '2026-08-01', '--to', '2026-08-04', '--run-id', 'code-2']);
    expect(semi.code).toBe(0);
    expect(flagOf(semi.dry.redFlags, 'same-code')).toMatchObject({
      severity: 'warn',
      partitions: ['2026-08-01', '2026-08-02', '2026-08-03'],
    });
    expect(semi.dry.partitions[0]?.flags[0]?.detail).toContain('published by run code-first with this very job version');
    // 34 days: manual by its range — the same question blocks.
    const manual = await dryRunCli(['orders-semi', '--from', '2026-07-04', '--to', '2026-08-07', '--run-id', 'code-3']);
    expect(manual.code).toBe(4);
    expect(flagOf(manual.dry.redFlags, 'same-code')).toMatchObject({
      severity: 'block',
      partitions: ['2026-08-01', '2026-08-02', '2026-08-03'],
    });

    const view = await appDryRun(app, {
      request_id: 'code-app',
      job: 'orders-semi',
      range: { from: '2026-08-01', to: '2026-08-04' },
      write_mode: 'overwrite-partition',
    });
    expect(codes(view.redFlags)).toContain('same-code:warn');
  });

  it('not raised once the code changed: a new job version', async () => {
    const fixed = orderMartJob({ name: 'orders-semi', billing: false }).replace('timezone: UTC', 'timezone: UTC\ndescription: fixed');
    ws.writeJob('orders-semi', fixed);
    try {
      const { code, dry } = await dryRunCli(['orders-semi', '--from', '2026-08-01', '--to', '2026-08-04', '--run-id', 'code-0']);
      expect(code).toBe(0);
      expect(flagOf(dry.redFlags, 'same-code')).toBeUndefined();
    } finally {
      ws.writeJob('orders-semi', orderMartJob({ name: 'orders-semi', billing: false }));
    }
  });
});
