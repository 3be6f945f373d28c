/**
 * The engine-side API the handlers call, on a folder workspace: creating a plan records its
 * run; the engine itself refuses a step that is not unlocked yet (the UI is not the gate);
 * a signed plan's request id cannot be reused for another plan.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProgressEvent } from '../../shared/contractTypes.ts';
import { GateError, InputError } from '../../shared/errors.ts';
import type { PlanInput } from '../../shared/schemas.ts';
import { ServiceError } from '../../electron/engine/runbook/secrets.ts';
import { createRunbookService, type RunbookService } from '../../electron/engine/runbook/service.ts';
import { folderWorkspace } from '../../electron/engine/runbook/workspace.ts';
import { planSchema } from '../../shared/schemas.ts';
import { makeWorkspace, orderMartJob, pgConfig, type Workspace } from '../support/workspace.ts';

let ws: Workspace;
let service: RunbookService;
const events: ProgressEvent[] = [];
const plan = (over: Partial<PlanInput> = {}) =>
  planSchema.parse({
    request_id: 'bf-unit-1',
    job: 'order-daily-mart',
    range: { from: '2026-05-01', to: '2026-05-04' },
    write_mode: 'overwrite-partition',
    ...over,
  });

beforeEach(() => {
  ws = makeWorkspace('service', { WAREHOUSE_PASSWORD: 'x' });
  ws.writeConfig(pgConfig({ warehouse: { url: 'postgres://app@127.0.0.1:1/none', passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  ws.writeJob('order-daily-mart', orderMartJob());
  service = createRunbookService({
    workspace: folderWorkspace(ws.dir, ws.db),
    defaultDb: ws.db,
    openSandbox: () => Promise.reject(new Error('no sandbox in unit tests')),
    secrets: { backend: 'unavailable', encrypt: () => Buffer.alloc(0), decrypt: () => '' },
    version: 'test',
    browserMode: true,
    actor: 'ann@host',
    env: { WAREHOUSE_PASSWORD: 'x' },
    emit: (e) => events.push(e),
  });
});

afterEach(async () => {
  await service.close();
  rmSync(ws.dir, { recursive: true, force: true });
});

async function refusal(fn: () => unknown): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a refusal');
}

describe('the runbook service', () => {
  it('describes the workspace', async () => {
    expect(await service.app.info({})).toEqual({
      version: 'test',
      workspace: {
        label: ws.dir.split('/').at(-1),
        kind: 'folder',
        dir: ws.dir,
        dbFile: ws.db,
        jobsDir: join(ws.dir, 'jobs'),
        configFile: join(ws.dir, 'backfill.config.yaml'),
      },
      operator: 'ann@host',
      secretStorage: 'unavailable',
      browserMode: true,
    });
  });

  it('lists the jobs', async () => {
    const { jobs, problems } = await service.jobs.list({});
    expect(problems).toEqual([]);
    expect(jobs.map((j) => [j.name, j.target, j.billing, j.downstream])).toEqual([
      ['order-daily-mart', 'mart.mart_order_daily on warehouse', true, ['dashboard.revenue_weekly']],
    ]);
  });

  it('creating a plan records its run, planned, with its partitions; the same plan again is the same run', async () => {
    const created = await service.plans.create({ plan: plan() });
    expect(created.runId).toBe('bf-unit-1');
    expect(await service.plans.create({ plan: plan() })).toEqual(created);
    const view = await service.runbook.get({ runId: 'bf-unit-1' });
    expect(view.run.status).toBe('planned');
    expect(view.summary).toBe('3 daily partitions, 2026-05-01 to 2026-05-03 inclusive');
    expect(view.tier).toBe('manual');
    expect(view.partitions.map((p) => `${p.key} ${p.status}`)).toEqual(['2026-05-01 pending', '2026-05-02 pending', '2026-05-03 pending']);
    expect(view.steps.map((s) => s.status)).toEqual(['ready', 'locked', 'locked', 'locked', 'locked', 'locked', 'locked']);
    expect((await service.history.list({ limit: 10, offset: 0 })).runs.map((r) => r.runId)).toEqual(['bf-unit-1']);
  });

  it('a request id already used by another plan is refused: a signed plan never changes', async () => {
    await service.plans.create({ plan: plan() });
    const err = await refusal(() => service.plans.create({ plan: plan({ range: { from: '2026-05-01', to: '2026-05-05' } }) }));
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.message).toBe('request id "bf-unit-1" is already a run (status planned) with a different plan');
  });

  it.each<[string, (s: RunbookService) => unknown, string, string]>([
    [
      'the snapshot before the sanity check',
      (s) => s.runbook.snapshot({ runId: 'bf-unit-1' }),
      '"Snapshot backup" is not unlocked yet',
      'Unlocked when "Source sanity check" holds.',
    ],
    [
      'the dry run before the snapshot',
      (s) => s.runbook.dryRun({ runId: 'bf-unit-1' }),
      '"Impact scope" is not unlocked yet',
      'Unlocked when "Source sanity check" holds.',
    ],
    [
      'executing before anything',
      (s) => s.run.start({ runId: 'bf-unit-1' }),
      '"Execute" is not unlocked yet',
      'Unlocked when "Source sanity check" holds.',
    ],
    [
      'comparing before executing',
      (s) => s.run.compare({ runId: 'bf-unit-1' }),
      '"Row-count comparison" is not unlocked yet',
      'Unlocked when "Source sanity check" holds.',
    ],
    [
      'closing before comparing',
      (s) => s.run.close({ runId: 'bf-unit-1', comment: '' }),
      '"Close" is not unlocked yet',
      'Unlocked when "Source sanity check" holds.',
    ],
  ])('the engine itself refuses %s', async (_what, act, message, reason) => {
    await service.plans.create({ plan: plan() });
    const err = await refusal(() => act(service));
    expect(err).toBeInstanceOf(GateError);
    expect([err.message, (err as GateError).reasons]).toEqual([message, [reason]]);
  });

  it.each<[string, (s: RunbookService) => unknown, string]>([
    ['a run that does not exist', (s) => s.runbook.get({ runId: 'nope' }), `no run "nope" in ${'DB'}`],
    ['pausing a run nobody executes', (s) => s.run.pause({ runId: 'bf-unit-1' }), 'run bf-unit-1 is not executing in this app'],
    [
      'a folder that is not a workspace',
      (s) => s.workspace.open({ dir: tmpdir() }),
      `${tmpdir()} is not a workspace: it has neither backfill.config.yaml nor a jobs/ folder`,
    ],
    ['a job that does not exist', (s) => s.jobs.get({ name: 'nope' }), 'job nope not found in'],
  ])('says plainly what is wrong with %s', async (_what, act, message) => {
    await service.plans.create({ plan: plan() });
    const err = await refusal(() => act(service));
    expect(err instanceof InputError || err instanceof ServiceError).toBe(true);
    expect(err.message).toContain(message.replace('DB', ws.db));
  });

  it('switches to another folder workspace, with its own ledger, and back', async () => {
    await service.plans.create({ plan: plan() });
    const other = makeWorkspace('service-other');
    other.writeConfig('connections: {}\nledger: own.sqlite\n');
    try {
      expect((await service.workspace.open({ dir: other.dir })).dbFile).toBe(join(other.dir, 'own.sqlite'));
      expect((await service.history.list({ limit: 10, offset: 0 })).total).toBe(0);
      expect((await service.workspace.open({ dir: ws.dir })).dbFile).toBe(ws.db);
      expect((await service.history.list({ limit: 10, offset: 0 })).runs.map((r) => r.runId)).toEqual(['bf-unit-1']);
    } finally {
      rmSync(other.dir, { recursive: true, force: true });
    }
  });

  it.each<[string, (s: RunbookService) => unknown]>([
    ['training:list', (s) => s.training.list({})],
    ['training:load', (s) => s.training.load({ id: 1 })],
    ['training:check', (s) => s.training.check({ id: 1 })],
  ])('%s refuses a folder workspace: a scenario resets the data it loads into', async (_name, act) => {
    const err = await refusal(() => act(service));
    expect(err).toBeInstanceOf(ServiceError);
    expect([err.message, (err as ServiceError).code, (err as ServiceError).hint]).toEqual([
      `training scenarios run only in the Sandbox, and the open workspace is the folder ${ws.dir}`,
      'unavailable',
      'open the Sandbox on the Workspace screen ("Use the Sandbox"): loading a scenario resets its data, so it is never offered on a real workspace',
    ]);
  });

  it('reports no progress events for work it refused', () => {
    expect(events).toEqual([]);
  });
});
