/**
 * The sandbox from nothing: `sandbox up` on an empty folder, every available training
 * scenario loaded and driven to its end through the command line, each checked against its
 * own definition of fixed, then `sandbox down` leaves no process behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../electron/engine/plan/load.ts';
import { removeSandbox } from '../../electron/engine/sandbox/index.ts';
import { SANDBOX_LEAD } from '../../electron/engine/sandbox/sandboxLead.ts';
import { scenario } from '../../electron/engine/sandbox/scenarios.ts';
import { openPg, type PgClient } from '../../electron/engine/targets/postgres/connect.ts';
import { openBucket } from '../../electron/engine/targets/s3/open.ts';
import type { S3Bucket } from '../../electron/engine/targets/s3/bucket.ts';
import { sandboxServerProcesses } from '../support/sandboxProcesses.ts';
import { signOff } from '../support/signoff.ts';
import { runCli, startCli, type CliResult, type Workspace } from '../support/workspace.ts';

const dir = join(mkdtempSync(join(tmpdir(), 'bfr-sandbox-')), 'sandbox');
const ws: Workspace = {
  dir,
  db: join(dir, 'runbook.sqlite'),
  env: { BACKFILL_RUNBOOK_WORKSPACE: dir },
  writeJob: () => undefined,
  writeConfig: () => undefined,
  writeFile: () => '',
};
const sandbox = (...args: string[]): string[] => ['sandbox', ...args, '--dir', dir];
const ROOT = resolve(import.meta.dirname, '../..');

const serverProcesses = (): string[] => sandboxServerProcesses(dir);

let coldStartMs = 0;

beforeAll(async () => {
  const started = Date.now();
  const up = await runCli({ ...ws, dir: tmpdir() }, sandbox('up'));
  coldStartMs = Date.now() - started;
  expect(up.code, up.stdout + up.stderr).toBe(0);
  expect(up.stdout).toContain('[Sandbox] started');
  console.info(`sandbox cold start: ${coldStartMs} ms (sandbox up from an empty folder to a seeded, reachable warehouse)`);
}, 120_000);

afterAll(async () => {
  await runCli({ ...ws, dir: tmpdir() }, sandbox('down'));
  removeSandbox(dir); // as root its PostgreSQL data lives in /var/tmp, not in the temp folder
});

async function load(id: number): Promise<void> {
  const r = await runCli(ws, sandbox('load', String(id)));
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(r.stdout).toContain(`[Sandbox] scenario ${id} loaded`);
  expect(r.stdout).toContain(
    'The sandbox\'s lead signs off: run-backfill sign <request> --identity sandbox-lead (passphrase "sandbox-training-only"',
  );
  const before = await runCli(ws, sandbox('check', String(id)));
  if (id !== 4 && id !== 3 && id !== 7) {
    // Freshly loaded, nothing is fixed: the check says what is missing.
    expect(before.code).toBe(1);
    expect(before.stdout).toContain('not fixed yet');
    expect(before.stdout).toMatch(/✗ target reconciles with the source: .* differs from the source/);
  }
}

async function expectFixed(id: number): Promise<void> {
  const r = await runCli(ws, sandbox('check', String(id)));
  expect(r.stdout, r.stderr).toContain('FIXED');
  expect(r.stdout).not.toContain('✗');
  expect(r.code).toBe(0);
}

async function ok(args: string[]): Promise<string> {
  const r = await runCli(ws, args);
  expect(r.code, `${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

/** The sandbox's warehouse and lake, opened from the config it wrote. */
async function sandboxServers(): Promise<{ pg: PgClient; lake: S3Bucket; close(): Promise<void> }> {
  const config = loadConfig(join(dir, 'backfill.config.yaml'));
  const warehouse = config.connections.warehouse;
  if (warehouse?.kind !== 'postgres') throw new Error('the sandbox config has no warehouse');
  const pg = await openPg({ url: warehouse.url, statementTimeoutMs: 60_000, lockTimeoutMs: 10_000, connectTimeoutMs: 10_000 });
  const lake = openBucket(config, 'lake', 'connections.lake', {});
  return {
    pg,
    lake,
    close: async () => {
      lake.client.destroy();
      await pg.end();
    },
  };
}

const PARTNER_DAYS = Array.from({ length: 10 }, (_, i) => `2026-07-${String(i + 1).padStart(2, '0')}`);
const partnerFile = (day: string): string => `partner/settlements/dt=${day}/settlements_${day.replaceAll('-', '')}.csv`;

/** Rows per day in partner.settlements, over the days of the partner's files. */
async function settlementDays(pg: PgClient): Promise<Record<string, number>> {
  const r = await pg.query<{ d: string; n: number }>(
    `select to_char(settlement_date, 'YYYY-MM-DD') as d, count(*)::int as n from partner.settlements
      where settlement_date between '2026-07-01' and '2026-07-10' group by 1 order by 1`,
  );
  return Object.fromEntries(r.rows.map((row) => [row.d, row.n]));
}

/** The oracle: the partner's file parsed here, by its own header's delimiter, against the table's rows of that day. */
async function tableEqualsFile(servers: { pg: PgClient; lake: S3Bucket }, day: string): Promise<{ rows: number; equal: boolean }> {
  const [header = '', ...lines] = ((await servers.lake.getText(partnerFile(day))) ?? '').trim().split('\n');
  const delimiter = header.includes(';') ? ';' : ',';
  const asText: Record<string, string> = {
    settlement_date: `to_char(settlement_date, 'YYYY-MM-DD')`,
    captured_at: `to_char(captured_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`,
  };
  const columns = header.split(delimiter).map((c) => asText[c] ?? `${c}::text`);
  const r = await servers.pg.query<{ line: string }>(
    `select concat_ws('|', ${columns.join(', ')}) as line from partner.settlements where settlement_date = $1`,
    [day],
  );
  const table = r.rows.map((row) => row.line).sort();
  const file = lines.map((l) => l.split(delimiter).join('|')).sort();
  return { rows: table.length, equal: file.length > 0 && JSON.stringify(table) === JSON.stringify(file) };
}

/** Runs a scenario's steps exactly as it prints them: each must be one plain run-backfill command. */
async function runPrintedSteps(id: number): Promise<CliResult[]> {
  ws.env.BACKFILL_SANDBOX_LEAD_PASSPHRASE = SANDBOX_LEAD.passphrase;
  const results: CliResult[] = [];
  for (const step of scenario(id).steps) {
    expect(step).toMatch(/^run-backfill( [^\s"'()<>…]+)+$/); // no placeholder, quoting or note to interpret
    const args = step.split(' ').slice(1);
    if (args[0] === 'sign') args.push('--passphrase-env', 'BACKFILL_SANDBOX_LEAD_PASSPHRASE'); // no terminal here to ask
    results.push(await runCli(ws, args));
  }
  return results;
}

/** Manual tier over more than one partition: the run holds after its canary (exit 3, the comparison shown). */
async function heldAfterCanary(args: string[]): Promise<string> {
  const r = await runCli(ws, args);
  expect(r.code, `${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(3);
  expect(r.stdout).toMatch(/Canary: 1 partition\(s\) written, reconciled with the source and compared/);
  return r.stdout;
}

/** A dry run, the sandbox lead's sign-off and the run — through its canary, when it has one — under one run id. */
async function manualRun(job: string, from: string, to: string, runId: string): Promise<string> {
  const flags = [job, '--from', from, '--to', to, '--run-id', runId];
  await ok([...flags, '--dry-run']);
  await signOff(ws, runId, 'sandbox-lead');
  const r = await runCli(ws, flags);
  if (r.code === 3 && r.stdout.includes('Canary:')) return ok(['--resume', '--run-id', runId]);
  expect(r.code, `${flags.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

describe('training scenarios, driven to their end', () => {
  it('lists all nine, every one available', async () => {
    const r = await runCli(ws, ['sandbox', 'scenarios']);
    expect(r.stdout).toContain('1. Refund reasons mapped wrong for two months');
    expect(r.stdout).toContain('3. Hours of raw events missing from S3\n');
    expect(r.stdout).toContain('6. Production load: lock waits appear mid-run');
    expect(r.stdout).toContain("7. A partner's CSV drop arrived with the wrong delimiter\n");
    expect(r.stdout).toContain('8. The source was purged for part of the range\n');
    expect(r.stdout).toContain('9. The range crosses closed billing periods\n');
    expect(r.stdout).not.toContain('not available');
  });

  it('1. refund reasons: the whole manual checklist with a lead sign-off', async () => {
    await load(1);
    const flags = [
      'refund-reason-daily',
      '--from',
      '2026-05-01',
      '--to',
      '2026-07-01',
      '--run-id',
      'train-1',
      '--sleep-ms',
      '0',
      '--max-row-diff-ratio',
      '0.5',
    ];
    expect(await ok(['check', 'refund-reason-daily', '--from', '2026-05-01', '--to', '2026-07-01'])).toContain('Source sanity checks:');
    expect(await ok([...flags, '--dry-run'])).toContain('Automation tier: manual (billing data');
    expect((await runCli(ws, sandbox('check', '1'))).stdout).toContain('✗ evidence: snapshot backup: no snapshot taken for this run');
    expect(await ok(['snapshot', 'refund-reason-daily', '--from', '2026-05-01', '--to', '2026-07-01', '--run-id', 'train-1'])).toContain(
      'Snapshot of 61 partition(s)',
    );
    // From another folder, as in the README: the workspace comes from BACKFILL_RUNBOOK_WORKSPACE.
    const elsewhere = await runCli({ ...ws, dir: tmpdir() }, [
      'signoff',
      'request',
      '--run-id',
      'train-1',
      '--out',
      join(dir, 'train-1.request.json'),
    ]);
    expect(elsewhere.code, elsewhere.stdout + elsewhere.stderr).toBe(0);
    await signOff(ws, 'train-1', 'sandbox-lead');
    await heldAfterCanary(flags);
    const run = await ok(['--resume', '--run-id', 'train-1']);
    expect(run).toContain('Run train-1 succeeded: 61 published');
    await expectFixed(1);
    // A training run's note says so where nobody can miss it.
    expect(await ok(['export', '--run-id', 'train-1', '--format', 'md'])).toMatch(
      /^# Incident note — backfill train-1 — SANDBOX TRAINING RUN, not production$/m,
    );
  });

  it('2. 72 hours mis-aggregated', async () => {
    await load(2);
    await manualRun('order-daily-mart', '2026-07-20', '2026-07-23', 'train-2');
    await expectFixed(2);
  });

  it('3. raw hours missing from S3: recovered into the backfill prefix, refined without the daily ETL', async () => {
    await load(3);
    const before = await runCli(ws, sandbox('check', '3'));
    expect(before.code).toBe(1);
    expect(before.stdout).toContain(
      '✗ refined hour 18 holds each event exactly once, refined: no published partition under s3://sandbox-lake/refined/event/dt=2026-07-14/hour=18/',
    );
    expect(before.stdout).toContain('✓ the automated prefix was left alone: 44 objects');
    const range = ['--from', '2026-07-14T18', '--to', '2026-07-14T20'];
    // The job as shipped writes where the automated export writes: the prefix gate refuses.
    const refused = await runCli(ws, ['raw-events-recover', ...range, '--run-id', 'train-3-raw']);
    expect(refused.code).toBe(4);
    expect(refused.stderr + refused.stdout).toContain('set target.path to "events-backfill/events-backfill_{date}_{hour}"');
    const jobFile = join(dir, 'jobs', 'raw-events-recover.yaml');
    writeFileSync(
      jobFile,
      readFileSync(jobFile, 'utf8').replace('path: "events/events_{date}_{hour}"', 'path: "events-backfill/events-backfill_{date}_{hour}"'),
    );
    expect(await ok(['raw-events-recover', ...range, '--run-id', 'train-3-raw'])).toContain('Reconciliation: 2 partition(s) agree');
    await ok(['raw-events-refined', ...range, '--run-id', 'train-3', '--dry-run']);
    expect(await ok(['raw-events-refined', ...range, '--run-id', 'train-3'])).toContain('Reconciliation: 2 partition(s) agree');
    // Run again: nothing doubles.
    await ok(['raw-events-refined', ...range, '--run-id', 'train-3-again', '--reprocess', 'all']);
    await expectFixed(3);
    // The mistake the check is for: silencing the gate by deleting the job's prefix lines, so
    // the recovered hour lands where the daily ETL will process it a second time.
    writeFileSync(
      jobFile,
      readFileSync(jobFile, 'utf8')
        .replace('path: "events-backfill/events-backfill_{date}_{hour}"', 'path: "events/events_{date}_{hour}"')
        .replace('  prefix: "events/"\n', '')
        .replace('  backfill_prefix: "events-backfill/"\n', ''),
    );
    await ok(['raw-events-recover', '--from', '2026-07-14T18', '--to', '2026-07-14T19', '--run-id', 'train-3-stray']);
    const after = await runCli(ws, sandbox('check', '3'));
    expect(after.code).toBe(1);
    expect(after.stdout).toContain(
      '✓ refined hour 19 holds each event exactly once, refined: 120 refined rows, none missing, none twice, each equal to its source event',
    );
    expect(after.stdout).toMatch(
      /✗ the automated prefix was left alone: 1 object\(s\) appeared \(events\/events_2026-07-14_18#0\.json\.gz\)|✗ the automated prefix was left alone: 2 object\(s\) appeared/,
    );
  });

  it('4. a contaminated source: the gate stops the trainee', async () => {
    await load(4);
    const check = await runCli(ws, ['check', 'refund-reason-daily', '--from', '2026-06-01', '--to', '2026-06-15']);
    expect(check.code).toBe(4);
    expect(check.stdout).toMatch(/FAIL\s+null_rate\(refunds\.reason_code\)/);
    await expectFixed(4);
  });

  it('5. the run crashes half way and resumes without duplicates', async () => {
    await load(5);
    const flags = ['order-daily-mart', '--from', '2026-06-01', '--to', '2026-07-01', '--run-id', 'train-5', '--sleep-ms', '150'];
    await ok([...flags, '--dry-run']);
    await signOff(ws, 'train-5', 'sandbox-lead');
    await heldAfterCanary(flags);
    const first = startCli(ws, ['--resume', '--run-id', 'train-5']);
    await new Promise<void>((resolve) => {
      let seen = '';
      first.child.stdout?.on('data', (d: Buffer) => {
        seen += d.toString();
        if (seen.includes('2026-06-10: published')) resolve();
      });
    });
    first.child.kill('SIGKILL');
    await first.done;
    await ok(['--resume', '--run-id', 'train-5']);
    await expectFixed(5);
  });

  it('6. production load: the run halts on lock waits instead of blocking a migration, then finishes', async () => {
    await load(6);
    const flags = [
      'order-daily-mart',
      '--from',
      '2026-07-01',
      '--to',
      '2026-07-11',
      '--run-id',
      'train-6',
      '--sleep-ms',
      '400',
      '--max-lock-wait-ms',
      '300',
    ];
    await ok([...flags, '--dry-run']);
    await signOff(ws, 'train-6', 'sandbox-lead');
    await heldAfterCanary(flags);
    const run = startCli(ws, ['--resume', '--run-id', 'train-6']);
    await new Promise<void>((resolve) => {
      let seen = '';
      run.child.stdout?.on('data', (d: Buffer) => {
        seen += d.toString();
        if (seen.includes('2026-07-02: published')) resolve();
      });
    });
    // A migration takes the mart's exclusive lock and holds it: the backfill's next partition
    // cannot get its lock within lock_timeout, retries, and halts rather than queue.
    const traffic = startCli(ws, sandbox('traffic', '--hold', '8'));
    const halted = await run.done;
    expect(halted.code, halted.stdout + halted.stderr).toBe(3);
    expect(halted.stdout).toMatch(/lock wait: partition 2026-07-\d\d could not lock/);
    expect((await traffic.done).stdout).toContain('[Sandbox] got the lock');
    await ok(['--resume', '--run-id', 'train-6']);
    await expectFixed(6);
  });
  it("7. a partner's CSV drop with the wrong delimiter: the printed steps reload exactly the two days, row for row", async () => {
    await load(7);
    const servers = await sandboxServers();
    try {
      // Broken: the nightly load refused both days; the other eight hold the partner's rows.
      const all = Object.fromEntries(PARTNER_DAYS.map((d) => [d, 400]));
      const { '2026-07-06': _six, '2026-07-07': _seven, ...others } = all;
      expect(await settlementDays(servers.pg)).toEqual(others);
      const before = await runCli(ws, sandbox('check', '7'));
      expect(before.code).toBe(1);
      expect(before.stdout).toContain(
        "✗ 2026-07-06 reloaded from the partner's file: no rows for 2026-07-06; the partner's file has 400. Not reloaded yet",
      );
      expect(before.stdout).toContain('✓ the other 8 days were left alone');
      expect(before.stdout).toContain("✓ the partner's drop was left as it arrived: 10 files");

      const [nightly, ...fix] = await runPrintedSteps(7);
      // The nightly job as shipped refuses the day, naming the field, the partition and the object.
      expect(nightly?.code).toBe(2);
      expect(nightly?.stderr).toContain(
        'the CSV objects of partition 2026-07-06 (s3://sandbox-lake/partner/settlements/dt=2026-07-06/settlements_20260706.csv) read as ONE column',
      );
      expect(nightly?.stderr).toContain('set source.csv.delimiter: ";"');
      const [held, resumed] = fix.slice(-2);
      for (const r of fix.slice(0, -2)) expect(r.code, r.stdout + r.stderr).toBe(0);
      // Manual tier: the first day is the canary; the printed steps continue after it.
      expect(held?.code, held?.stdout).toBe(3);
      expect(held?.stdout).toContain('Canary: 1 partition(s) written');
      expect(resumed?.code, resumed?.stdout).toBe(0);
      expect(resumed?.stdout).toContain('Run partner-reload-2026-07-06 succeeded: 2 published, 0 failed, 0 pending, 800 rows');

      expect(await settlementDays(servers.pg)).toEqual(all);
      for (const day of ['2026-07-06', '2026-07-07']) expect(await tableEqualsFile(servers, day)).toEqual({ rows: 400, equal: true });
      await expectFixed(7);
    } finally {
      await servers.close();
    }
  });

  it('7. the wrong fixes, each named: --to read as inclusive, a "safe" rerun of the day before, the partner\'s file edited in place', async () => {
    await load(7);
    await manualRun('partner-settlements-semicolon', '2026-07-06', '2026-07-07', 'train-7-short');
    const short = await runCli(ws, sandbox('check', '7'));
    expect(short.code).toBe(1);
    expect(short.stdout).toContain(
      "✓ 2026-07-06 reloaded from the partner's file: 400 rows, each equal to the partner's row (run train-7-short)",
    );
    expect(short.stdout).toContain(
      "✗ 2026-07-07 reloaded from the partner's file: no rows for 2026-07-07; the partner's file has 400. Only 2026-07-06 was reloaded: --to is exclusive, so a run over both days ends --to 2026-07-08",
    );
    expect(short.stdout).toContain('✗ evidence: snapshot backup: no snapshot taken for this run');
    expect(short.stdout).toContain('✓ the other 8 days were left alone');

    await manualRun('partner-settlements', '2026-07-05', '2026-07-06', 'train-7-day-before');
    const dayBefore = await runCli(ws, sandbox('check', '7'));
    expect(dayBefore.stdout).toContain(
      '✗ the other 8 days were left alone: 2026-07-05 rewritten by run train-7-day-before — only 2026-07-06 and 2026-07-07 were to be reloaded',
    );

    // "Fixing" the partner's file so the nightly job reads it: the day loads, the record of what the partner sent is gone.
    const servers = await sandboxServers();
    try {
      const file = partnerFile('2026-07-07');
      await servers.lake.put(file, ((await servers.lake.getText(file)) ?? '').replaceAll(';', ','), 'text/csv');
      await manualRun('partner-settlements', '2026-07-07', '2026-07-08', 'train-7-edited');
      expect(await tableEqualsFile(servers, '2026-07-07')).toEqual({ rows: 400, equal: true });
      const edited = await runCli(ws, sandbox('check', '7'));
      expect(edited.code).toBe(1);
      expect(edited.stdout).toContain('not fixed yet');
      expect(edited.stdout).toContain("✓ 2026-07-07 reloaded from the partner's file: 400 rows");
      expect(edited.stdout).toContain(
        "✗ the partner's drop was left as it arrived: partner/settlements/dt=2026-07-07/settlements_20260707.csv was changed",
      );
      // A row changed after the load is found and named, row by row.
      const changed = await servers.pg.query<{ id: string }>(
        `update partner.settlements set fee_amount = fee_amount + 0.01
          where transaction_id = (select min(transaction_id) from partner.settlements where settlement_date = '2026-07-06')
          returning transaction_id as id`,
      );
      const wrong = await runCli(ws, sandbox('check', '7'));
      expect(wrong.stdout).toContain(
        `✗ 2026-07-06 reloaded from the partner's file: 400 rows, but 1 with a value that differs (first: ${changed.rows[0]?.id ?? '?'})`,
      );
    } finally {
      await servers.close();
    }
  });
});

describe('training scenarios 8 and 9: what the dry run asks', () => {
  const purged = 'source-gone: 3 partition(s) whose source is no longer there: 2026-06-08, 2026-06-09, 2026-06-10';

  it('8. the source purged for part of the range: the whole range is refused; recomputed around the three days, it is fixed', async () => {
    await load(8);
    const whole = await runCli(ws, ['order-daily-mart', '--from', '2026-06-01', '--to', '2026-06-16', '--run-id', 'train-8', '--dry-run']);
    expect(whole.code, whole.stderr).toBe(4);
    expect(whole.stdout).toContain(purged);
    await manualRun('order-daily-mart', '2026-06-01', '2026-06-08', 'train-8-a');
    const half = await runCli(ws, sandbox('check', '8'));
    expect(half.code).toBe(1);
    expect(half.stdout).toContain('✓ the purged days keep their rows: ');
    expect(half.stdout).toMatch(
      /✗ target reconciles with the source: mart\.mart_order_daily differs from the source over 2026-06-11 → 2026-06-16/,
    );
    await manualRun('order-daily-mart', '2026-06-11', '2026-06-16', 'train-8-b');
    await expectFixed(8);
  });

  it('8. the wrong fix, accepting the purge: the source sanity gate still refuses empty days; had they gone, the check names them', async () => {
    await load(8);
    const accepted = [
      'order-daily-mart',
      '--from',
      '2026-06-01',
      '--to',
      '2026-06-16',
      '--accept-purged',
      '2026-06-08,2026-06-09,2026-06-10',
      '--run-id',
      'train-8-wrong',
    ];
    const dry = await runCli(ws, [...accepted, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/warn {2}source-gone: 3 partition\(s\) whose source is no longer there/);
    await signOff(ws, 'train-8-wrong', 'sandbox-lead');
    const run = await runCli(ws, accepted);
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('source sanity check row_count_outlier(orders) failed: 3 outlier partition(s): 2026-06-08: 0 rows');
    // What such a run would have left: the three days' rows gone.
    const servers = await sandboxServers();
    try {
      await servers.pg.query(`delete from mart.mart_order_daily where order_date between '2026-06-08' and '2026-06-10'`);
    } finally {
      await servers.close();
    }
    const check = await runCli(ws, sandbox('check', '8'));
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(
      "✗ the purged days keep their rows: 2026-06-08, 2026-06-09, 2026-06-10 lost their rows: the source cannot give them back (restore them from the run's snapshot)",
    );
  });

  it("9. closed billing periods: June's invoiced days are refused; July alone is recomputed and it is fixed", async () => {
    await load(9);
    const whole = await runCli(ws, [
      'refund-reason-daily',
      '--from',
      '2026-06-20',
      '--to',
      '2026-07-11',
      '--run-id',
      'train-9',
      '--dry-run',
    ]);
    expect(whole.code, whole.stderr).toBe(4);
    expect(whole.stdout).toContain('closed-partition: 11 closed partition(s): 2026-06-20, 2026-06-21');
    expect(whole.stdout).toContain('closed: refunds already invoiced to the payment partner (the workspace config: its probe lists it)');
    await manualRun('refund-reason-daily', '2026-07-01', '2026-07-11', 'train-9-july');
    await expectFixed(9);
  });

  it("9. the wrong fix: overwriting the invoiced days with a lead's sign-off — the check names what no longer matches the invoice", async () => {
    await load(9);
    const june = Array.from({ length: 11 }, (_, i) => `2026-06-${String(20 + i)}`).join(',');
    const flags = [
      'refund-reason-daily',
      '--from',
      '2026-06-20',
      '--to',
      '2026-07-11',
      '--overwrite-closed',
      june,
      '--run-id',
      'train-9-wrong',
    ];
    expect((await runCli(ws, [...flags, '--dry-run'])).code).toBe(0);
    await signOff(ws, 'train-9-wrong', 'sandbox-lead');
    await heldAfterCanary(flags);
    await ok(['--resume', '--run-id', 'train-9-wrong']);
    const check = await runCli(ws, sandbox('check', '9'));
    expect(check.code).toBe(1);
    expect(check.stdout).toContain("✗ June's invoiced days are as invoiced: the invoiced days changed since they were invoiced");
    expect(check.stdout).toContain('✗ no run rewrote an invoiced day: 2026-06-20 by train-9-wrong');
  });
});

describe('the app on the same sandbox', () => {
  it('uses the servers sandbox up started, and leaves them running when it quits', async () => {
    const before = serverProcesses();
    const app = spawn(
      process.execPath,
      ['dist/node/browser-mode.mjs', '--sandbox', dir, '--db', join(dir, 'runbook.sqlite'), '--ready-json'],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const ready = await new Promise<string>((resolveReady, reject) => {
      app.stdout.once('data', (d: Buffer) => resolveReady(d.toString()));
      app.once('exit', (code) => reject(new Error(`the app exited with ${code} before it was ready`)));
    });
    expect(JSON.parse(ready)).toMatchObject({ origin: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) as string });
    app.kill('SIGTERM');
    await new Promise((r) => app.once('exit', r));
    expect(serverProcesses()).toEqual(before);
    expect((await runCli({ ...ws, dir: tmpdir() }, sandbox('status'))).stdout).toMatch(/^Sandbox running \(pid \d+\)/);
  });
});

describe('sandbox down', () => {
  it('stops every server it started', async () => {
    const servers = serverProcesses();
    expect(servers.filter((p) => p.includes('s3rverProcess'))).toHaveLength(1);
    expect(servers.length).toBeGreaterThan(1);
    const down = await runCli({ ...ws, dir: tmpdir() }, sandbox('down'));
    expect(down.code).toBe(0);
    expect(down.stdout).toMatch(/Sandbox stopped in [\d.]+ s/);
    expect(serverProcesses()).toEqual([]);
    console.info(`sandbox down: ${down.stdout.trim()}`);
  });
});
