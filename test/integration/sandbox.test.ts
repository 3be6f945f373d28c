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
import { removeSandbox } from '../../electron/engine/sandbox/index.ts';
import { sandboxServerProcesses } from '../support/sandboxProcesses.ts';
import { signOff } from '../support/signoff.ts';
import { runCli, startCli, type Workspace } from '../support/workspace.ts';

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
  if (id !== 4 && id !== 3) {
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

describe('training scenarios, driven to their end', () => {
  it('lists all six, every one available', async () => {
    const r = await runCli(ws, ['sandbox', 'scenarios']);
    expect(r.stdout).toContain('1. Refund reasons mapped wrong for two months');
    expect(r.stdout).toContain('3. Hours of raw events missing from S3\n');
    expect(r.stdout).toContain('6. Production load: lock waits appear mid-run');
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
    const run = await ok(flags);
    expect(run).toContain('Run train-1 succeeded: 61 published');
    await expectFixed(1);
    // A training run's note says so where nobody can miss it.
    expect(await ok(['export', '--run-id', 'train-1', '--format', 'md'])).toMatch(
      /^# Incident note — backfill train-1 — SANDBOX TRAINING RUN, not production$/m,
    );
  });

  it('2. 72 hours mis-aggregated', async () => {
    await load(2);
    const flags = ['order-daily-mart', '--from', '2026-07-20', '--to', '2026-07-23', '--run-id', 'train-2'];
    await ok([...flags, '--dry-run']);
    await signOff(ws, 'train-2', 'sandbox-lead');
    await ok(flags);
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
    const first = startCli(ws, flags);
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
    const run = startCli(ws, flags);
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
