/**
 * The CLI and the app take one path into an execution (engine/runbook/execute.ts): a CLI
 * resume is refused by each gate that refuses the app's resume, with the same words; a run
 * whose executor was SIGKILLed (and is still a zombie) resumes at once; and a dead server is
 * the same error in both — CLI exit 2, app error kind `connection`, one message.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CallResult } from '../../shared/contract.ts';
import { registerHandlers, type IpcEventLike, type IpcMainLike } from '../../electron/main/handlers/index.ts';
import { freePort } from '../../electron/engine/sandbox/embeddedPostgres.ts';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { createTestDatabase } from '../support/pg.ts';
import { CLI, makeWorkspace, orderMartJob, pgConfig, runCli, type Workspace } from '../support/workspace.ts';
import { appRefusal, appService } from '../support/app.ts';
import type { RunbookService } from '../../electron/engine/runbook/service.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;
const RANGE = ['--from', '2026-05-01', '--to', '2026-05-06'];
const JOB = orderMartJob({
  name: 'orders-mart',
  billing: false,
  extra: 'quality:\n  - { kind: null_rate, table: orders, column: customer_id, time_column: paid_at, max: 0, severity: fail }\n',
});

function published(runId: string): number {
  const sqlite = new Database(ws.db, { readonly: true });
  const row = sqlite.prepare(`select count(*) as n from partitions where run_id = ? and status = 'published'`).get(runId) as { n: number };
  sqlite.close();
  return row.n;
}

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'onepath');
  await seedWarehouse(db.client);
  ws = makeWorkspace('onepath', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  ws.writeJob('orders-mart', JOB);
});

afterAll(async () => {
  await db?.drop();
});

describe('a CLI resume passes the gates an app resume passes', () => {
  const runId = 'gate-1';
  let app: RunbookService;

  beforeAll(async () => {
    // Everything the app's runbook wants before step 5: a dry run of this plan and a snapshot on record.
    const panic = join(ws.dir, 'panic');
    const plan = ['orders-mart', ...RANGE, '--run-id', runId, '--panic-file', panic];
    expect((await runCli(ws, [...plan, '--dry-run'])).code).toBe(0);
    expect((await runCli(ws, ['snapshot', 'orders-mart', ...RANGE, '--run-id', runId])).code).toBe(0);
    // Halted at once by its panic file: a run that exists and is resumable.
    writeFileSync(panic, 'stop');
    const halted = await runCli(ws, plan);
    expect(halted.code, halted.stdout + halted.stderr).toBe(3);
    rmSync(panic);
    app = appService(ws, { WAREHOUSE_PASSWORD: db.password });
  });

  afterAll(async () => {
    await app?.close();
  });

  it('a job file that changed since the run was planned: both refuse, in the same words', async () => {
    ws.writeJob('orders-mart', JOB.replace('timezone: UTC', 'timezone: UTC\ndescription: edited after planning'));
    try {
      const refused = await appRefusal(() => Promise.resolve(app.run.start({ runId })));
      expect(refused.message).toBe(
        `job "orders-mart" changed since run ${runId} was planned: acting now would mix two versions of the SQL`,
      );
      const cli = await runCli(ws, ['--resume', '--run-id', runId]);
      expect(cli.code, cli.stderr).toBe(4);
      expect(cli.stderr).toContain(refused.message);
      for (const reason of refused.reasons) expect(cli.stderr).toContain(reason);
    } finally {
      ws.writeJob('orders-mart', JOB);
    }
    expect(published(runId)).toBe(0);
  });

  it('a source sanity check that now fails: both refuse, in the same words, before writing', async () => {
    await db.client.query(`alter table orders alter column customer_id drop not null`);
    await db.client.query(
      `update orders set customer_id = null where order_id in (select order_id from orders where paid_at >= '2026-05-02' and paid_at < '2026-05-03' limit 2)`,
    );
    try {
      const refused = await appRefusal(() => Promise.resolve(app.run.start({ runId })));
      const reason = refused.reasons.find((r) => r.startsWith('source sanity check null_rate(orders.customer_id) failed'));
      expect(reason, refused.reasons.join('\n')).toBeDefined();
      const cli = await runCli(ws, ['--resume', '--run-id', runId]);
      expect(cli.code, cli.stdout + cli.stderr).toBe(4);
      expect(cli.stderr).toContain(`  - ${reason}`);
      expect(cli.stdout).toContain('Source sanity checks: BLOCKED');
    } finally {
      await db.client.query(`update orders set customer_id = 1 where customer_id is null`);
    }
    expect(published(runId)).toBe(0);
  });

  it('with the source healthy again, the CLI resume runs it to the end', async () => {
    const cli = await runCli(ws, ['--resume', '--run-id', runId]);
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    expect(published(runId)).toBe(5);
  });
});

describe('a run whose executor was SIGKILLed', () => {
  // Only Linux's /proc tells a zombie from a live process (elsewhere the pid check is all there is).
  it.runIf(existsSync('/proc/self/stat'))('resumes at once, while the dead executor is still a zombie', async () => {
    const runId = 'kill-1';
    // The CLI's parent execs into `sleep`, which never reaps it: once killed, it stays a zombie.
    const args = ['orders-mart', ...RANGE, '--run-id', runId, '--sleep-ms', '400'].map((a) => `'${a}'`).join(' ');
    const parent = spawn('/bin/sh', ['-c', `'${process.execPath}' '${CLI}' ${args} >/dev/null 2>&1 & echo $!; exec sleep 120`], {
      cwd: ws.dir,
      env: { PATH: process.env.PATH, HOME: ws.dir, ...ws.env },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const pid = Number(await new Promise<string>((r) => createInterface({ input: parent.stdout }).once('line', r)));
      for (let i = 0; i < 200 && published(runId) < 1; i++) await new Promise((r) => setTimeout(r, 100));
      expect(published(runId)).toBeGreaterThanOrEqual(1);
      process.kill(pid, 'SIGKILL');
      let state = '';
      for (let i = 0; i < 50 && state !== 'Z'; i++) {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
        if (state !== 'Z') await new Promise((r) => setTimeout(r, 50));
      }
      expect(state).toBe('Z'); // its pid still exists: kill(pid, 0) alone would call it alive
      const resumed = await runCli(ws, ['--resume', '--run-id', runId, '--sleep-ms', '0']);
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(resumed.stderr).not.toContain('another process');
      expect(published(runId)).toBe(5);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});

describe('a dead PostgreSQL server', () => {
  it('is exit 2 for the CLI and a `connection` error for the app, with the same message', async () => {
    const port = await freePort(); // nothing listens there
    const dead = makeWorkspace('dead', { WAREHOUSE_PASSWORD: 'x' });
    dead.writeConfig(pgConfig({ warehouse: { url: `postgres://postgres@127.0.0.1:${port}/gone`, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
    dead.writeJob('orders-mart', JOB);
    const cli = await runCli(dead, ['check', 'orders-mart', ...RANGE]);
    expect(cli.code).toBe(2);
    const line = /^run-backfill: (.*)$/m.exec(cli.stderr)?.[1] ?? '';
    expect(line).toContain(`cannot connect to PostgreSQL at 127.0.0.1:${port}/gone: connection refused`);

    // The app, through its real handlers (the same path Electron's IPC and browser mode take).
    const service = appService(dead, { WAREHOUSE_PASSWORD: 'x' });
    const handlers = new Map<string, (event: IpcEventLike, ...args: unknown[]) => unknown>();
    const ipc: IpcMainLike = { handle: (c, l) => void handlers.set(c, l), removeHandler: (c) => void handlers.delete(c) };
    registerHandlers(ipc, { trust: () => true, redact: (t) => service.redact(t) }, service);
    const event: IpcEventLike = { senderFrame: { url: 'app://runbook/' }, sender: { id: 1 } };
    const call = (name: string, input: unknown) => handlers.get(name)?.(event, input) as Promise<CallResult<unknown>>;
    const plan = {
      request_id: 'dead-1',
      job: 'orders-mart',
      range: { from: '2026-05-01', to: '2026-05-06' },
      write_mode: 'overwrite-partition',
    };
    expect(await call('plans:create', { plan })).toMatchObject({ ok: true });
    const sanity = await call('runbook:sanity', { runId: 'dead-1' });
    await service.close();
    expect(sanity.ok).toBe(false);
    if (sanity.ok) return;
    expect(sanity.error.code).toBe('connection');
    expect(sanity.error.message).toBe(line);
    expect(cli.stderr).toContain(`hint: ${sanity.error.hint}`);
  });
});
