/**
 * The canary (issue 15, source article 003): the first N partitions run, are reconciled and
 * compared with their snapshot by key, and the run waits in `canary` until the operator continues
 * (`--resume`, the app's Continue) or abandons it — on by default for the manual tier.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CanaryBody } from '../../shared/canary.ts';
import type { RunbookService } from '../../electron/engine/runbook/service.ts';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { appDryRun, appRefusal, appService, cliJson } from '../support/app.ts';
import { createTestDatabase } from '../support/pg.ts';
import { signOff } from '../support/signoff.ts';
import { makeWorkspace, orderMartJob, pgConfig, runCli, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;

/** The mart's amounts a hundred times too large over a range (scenario 2's defect). */
async function corrupt(from: string, to: string): Promise<void> {
  await db.client.query(`update mart.mart_order_daily set paid_amount = paid_amount * 100 where order_date >= $1 and order_date < $2`, [
    from,
    to,
  ]);
}

/** Days of the mart that equal a recomputation from the source. */
async function fixedDays(from: string, to: string): Promise<string[]> {
  const r = await db.client.query<{ d: string }>(
    `select to_char(m.order_date, 'YYYY-MM-DD') as d from mart.mart_order_daily m
      where m.order_date >= $1 and m.order_date < $2
      group by m.order_date
     having sum(m.paid_amount) = (select sum(paid_amount) from orders where paid_at >= m.order_date and paid_at < m.order_date + 1)
      order by 1`,
    [from, to],
  );
  return r.rows.map((row) => row.d);
}

function ledger<T>(sql: string, ...params: unknown[]): T[] {
  const sqlite = new Database(ws.db, { readonly: true });
  try {
    return sqlite.prepare(sql).all(...params) as T[];
  } finally {
    sqlite.close();
  }
}

const status = (runId: string) => ledger<{ status: string }>('select status from runs where run_id = ?', runId)[0]?.status;

async function prepareManual(runId: string, from: string, to: string, extra: string[] = []): Promise<string[]> {
  const args = ['orders-manual', '--from', from, '--to', to, '--run-id', runId, ...extra];
  expect((await runCli(ws, [...args, '--dry-run'])).code).toBe(0);
  expect((await runCli(ws, ['snapshot', 'orders-manual', '--from', from, '--to', to, '--run-id', runId])).code).toBe(0);
  await signOff(ws, runId);
  return args;
}

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'canary');
  await seedWarehouse(db.client);
  ws = makeWorkspace('canary', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  ws.writeJob('orders-manual', orderMartJob({ name: 'orders-manual', billing: true }));
});

afterAll(async () => {
  await db?.drop();
});

describe('a manual-tier run', () => {
  it('stops after its canary (1 partition by default), shows the comparison, and continues to the end on --resume', async () => {
    await corrupt('2026-07-20', '2026-07-25');
    const args = await prepareManual('can-1', '2026-07-20', '2026-07-25');
    const held = await cliJson(ws, args);
    expect(held.code, held.stderr).toBe(3);
    expect(held.stderr).toContain('Continue with: run-backfill --resume --run-id can-1');
    const canary = held.of<CanaryBody & { evidenceId: number }>('canary');
    expect(canary?.size).toBe(1);
    const first = canary?.partitions[0];
    expect(first).toMatchObject({ key: '2026-07-20', basis: 'snapshot' });
    // Every customer's amount of the day changed (÷100), no key added or removed.
    expect(first?.keys).toMatchObject({ method: 'against snapshot', added: 0, removed: 0 });
    expect(first?.keys?.changed).toBe(first?.keys?.before);
    expect(first?.keys?.changed).toBeGreaterThan(300);
    const amount = first?.keys?.measures.find((m) => m.column === 'paid_amount');
    expect(Number(amount?.before)).toBeCloseTo(Number(amount?.after) * 100, 0);
    expect(held.lines.find((l) => l.type === 'run-finished')).toMatchObject({ status: 'canary', published: 1, pending: 4 });
    expect(status('can-1')).toBe('canary');
    expect(await fixedDays('2026-07-20', '2026-07-25')).toEqual(['2026-07-20']);
    // The canary's partition was reconciled before the hold.
    expect(ledger('select id from evidence where run_id = ? and kind = ?', 'can-1', 'reconciliation')).toHaveLength(1);

    const text = await runCli(ws, ['status', '--run-id', 'can-1']);
    expect(text.stdout).toContain('Run can-1  [canary]');

    const resumed = await runCli(ws, ['--resume', '--run-id', 'can-1']);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/Run can-1 succeeded: 5 published/);
    expect(status('can-1')).toBe('succeeded');
    expect(await fixedDays('2026-07-20', '2026-07-25')).toEqual(['2026-07-20', '2026-07-21', '2026-07-22', '2026-07-23', '2026-07-24']);
    const events = ledger<{ event: string }>(`select event from audit_log where run_id = ? and entity = 'run' order by seq`, 'can-1').map(
      (e) => e.event,
    );
    expect(events).toEqual(expect.arrayContaining(['run.started', 'run.canary', 'run.canary-continued', 'run.succeeded']));
    expect(events).not.toContain('run.resumed');
  });

  it('--canary 2 runs two first; --canary 0 runs the whole range at once', async () => {
    await corrupt('2026-07-01', '2026-07-04');
    const two = await prepareManual('can-2', '2026-07-01', '2026-07-04', ['--canary', '2']);
    const held = await cliJson(ws, two);
    expect(held.code).toBe(3);
    expect(held.of<CanaryBody>('canary')?.partitions.map((p) => p.key)).toEqual(['2026-07-01', '2026-07-02']);

    await corrupt('2026-07-05', '2026-07-08');
    const none = await prepareManual('can-0', '2026-07-05', '2026-07-08', ['--canary', '0']);
    const all = await runCli(ws, none);
    expect(all.code, all.stdout + all.stderr).toBe(0);
    expect(ledger('select id from evidence where run_id = ? and kind = ?', 'can-0', 'canary')).toHaveLength(0);
  });

  it('abandoned after its canary: writes nothing more, and a resume is refused (exit 4)', async () => {
    await corrupt('2026-07-10', '2026-07-13');
    const args = await prepareManual('can-ab', '2026-07-10', '2026-07-13');
    expect((await runCli(ws, args)).code).toBe(3);
    const abandoned = await runCli(ws, ['abandon', '--run-id', 'can-ab', '--reason', 'the canary moved the wrong keys']);
    expect(abandoned.code, abandoned.stderr).toBe(0);
    expect(abandoned.stdout).toContain('Put them back with: run-backfill restore --run-id can-ab');
    expect(status('can-ab')).toBe('abandoned');
    const again = await runCli(ws, ['--resume', '--run-id', 'can-ab']);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('run "can-ab" was abandoned after its canary');
    expect(await fixedDays('2026-07-10', '2026-07-13')).toEqual(['2026-07-10']);
    const twice = await runCli(ws, ['abandon', '--run-id', 'can-ab']);
    expect(twice.code).toBe(4);
  });
});

describe('in the app', () => {
  let app: RunbookService;
  beforeAll(() => {
    app = appService(ws, { WAREHOUSE_PASSWORD: db.password });
  });
  afterAll(async () => {
    await app?.close();
  });

  async function settled(runId: string): Promise<string> {
    for (let i = 0; i < 300; i++) {
      const view = await app.runbook.get({ runId });
      if (!view.live) return view.run.status;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`run ${runId} is still executing`);
  }

  it('Start holds after the canary with its comparison on record; Continue (start again) runs the rest', async () => {
    await corrupt('2026-06-20', '2026-06-23');
    await appDryRun(app, {
      request_id: 'can-app',
      job: 'orders-manual',
      range: { from: '2026-06-20', to: '2026-06-23' },
      write_mode: 'overwrite-partition',
    });
    await signOff(ws, 'can-app');
    expect(await app.run.start({ runId: 'can-app' })).toEqual({ started: true });
    expect(await settled('can-app')).toBe('canary');
    const recorded = await app.runbook.recorded({ runId: 'can-app' });
    expect(recorded.canary?.partitions[0]).toMatchObject({ key: '2026-06-20', basis: 'snapshot' });
    expect(recorded.canary?.partitions[0]?.keys?.changed).toBeGreaterThan(300);
    const view = await app.runbook.get({ runId: 'can-app' });
    expect(view.steps.find((s) => s.id === 'execute')).toMatchObject({ status: 'active' });
    expect(view.steps.find((s) => s.id === 'execute')?.detail).toContain('Held after its canary');

    await app.run.start({ runId: 'can-app' });
    expect(await settled('can-app')).toBe('succeeded');
    expect(await fixedDays('2026-06-20', '2026-06-23')).toEqual(['2026-06-20', '2026-06-21', '2026-06-22']);
  });

  it('Abandon ends it; the app refuses to start it again', async () => {
    await appDryRun(app, {
      request_id: 'can-app-ab',
      job: 'orders-manual',
      range: { from: '2026-06-24', to: '2026-06-27' },
      write_mode: 'overwrite-partition',
    });
    await signOff(ws, 'can-app-ab');
    await app.run.start({ runId: 'can-app-ab' });
    expect(await settled('can-app-ab')).toBe('canary');
    expect((await app.run.abandon({ runId: 'can-app-ab', reason: 'wrong keys' })).status).toBe('abandoned');
    const refused = await appRefusal(() => app.run.start({ runId: 'can-app-ab' }));
    expect(refused.message).toContain('was abandoned after its canary');
  });
});
