import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, StoreError, type Run, type RunInput, type Store } from '../../electron/engine/store/index.ts';

let nowMs = Date.parse('2026-11-30T12:00:00.000Z');
const clock = () => new Date(nowMs);
const at = (iso: string) => {
  nowMs = Date.parse(iso);
};
let store: Store;

const runInput = (over: Partial<RunInput> = {}): RunInput => ({
  runId: 'r1',
  jobName: 'daily_revenue',
  planHash: 'p1',
  jobHash: 'j1',
  kind: 'execute',
  rangeFrom: '2026-05-01',
  rangeTo: '2026-05-04',
  unit: 'day',
  timezone: 'UTC',
  writeMode: 'replace-partition',
  tier: 'manual',
  requestedBy: 'ana',
  executedBy: 'bo',
  settings: { sleepMs: 250, concurrency: 1 },
  partitions: ['2026-05-01', '2026-05-02', '2026-05-03'].map((key) => ({ key, start: `${key}T00:00:00.000Z`, end: null })),
  actor: 'bo',
  ...over,
});

function storeErrorOf(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error('expected a StoreError, nothing was thrown');
}

beforeEach(() => {
  at('2026-11-30T12:00:00.000Z');
  store = openStore(':memory:', { clock });
  store.plans.save({ planHash: 'p1', requestId: 'REQ-1', jobName: 'daily_revenue', plan: { range: ['2026-05-01', '2026-05-04'] } });
});
afterEach(() => store.close());

const events = (runId?: string) =>
  store.audit.list(runId === undefined ? {} : { runId }).map((e) => [e.event, e.fromStatus, e.toStatus, e.actor]);

describe('jobs', () => {
  it('upserts, audits changes, and skips writes when nothing changed', () => {
    const first = store.jobs.upsert({
      name: 'daily_revenue',
      jobHash: 'h1',
      definition: { b: 1, a: [2] },
      sourceFile: 'jobs/daily_revenue.yaml',
      actor: 'ana',
    });
    expect(first).toEqual({
      name: 'daily_revenue',
      jobHash: 'h1',
      definition: { a: [2], b: 1 },
      sourceFile: 'jobs/daily_revenue.yaml',
      updatedAt: '2026-11-30T12:00:00.000Z',
    });
    expect(store.db.prepare('SELECT definition_json FROM jobs').pluck().get()).toBe('{"a":[2],"b":1}');
    at('2026-11-30T13:00:00.000Z');
    expect(
      store.jobs.upsert({ name: 'daily_revenue', jobHash: 'h1', definition: {}, sourceFile: 'jobs/daily_revenue.yaml' }).updatedAt,
    ).toBe('2026-11-30T12:00:00.000Z');
    expect(
      store.jobs.upsert({ name: 'daily_revenue', jobHash: 'h2', definition: { a: 3 }, sourceFile: 'jobs/daily_revenue.yaml' }),
    ).toMatchObject({ jobHash: 'h2', definition: { a: 3 }, updatedAt: '2026-11-30T13:00:00.000Z' });
    expect(store.jobs.get('daily_revenue')?.jobHash).toBe('h2');
    expect(store.jobs.get('missing')).toBeUndefined();
    const jobEvents = store.audit
      .list()
      .filter((e) => e.entity === 'job')
      .map((e) => [e.event, e.actor, e.detail]);
    expect(jobEvents).toEqual([
      ['job.created', 'ana', { jobHash: 'h1', previousJobHash: null, sourceFile: 'jobs/daily_revenue.yaml' }],
      ['job.updated', 'system', { jobHash: 'h2', previousJobHash: 'h1', sourceFile: 'jobs/daily_revenue.yaml' }],
    ]);
  });
});

describe('plans', () => {
  it('save is idempotent by hash', () => {
    at('2026-12-01T00:00:00.000Z');
    const again = store.plans.save({ planHash: 'p1', requestId: 'REQ-other', jobName: 'x', plan: { other: true } });
    expect(again).toEqual({
      planHash: 'p1',
      requestId: 'REQ-1',
      jobName: 'daily_revenue',
      plan: { range: ['2026-05-01', '2026-05-04'] },
      createdAt: '2026-11-30T12:00:00.000Z',
    });
    expect(
      store.audit
        .list()
        .filter((e) => e.event === 'plan.saved')
        .map((e) => e.entityId),
    ).toEqual(['p1']);
    expect(store.plans.get('nope')).toBeUndefined();
  });
});

describe('runs.create', () => {
  it('inserts the run as planned with its partitions in order, and audits it', () => {
    const run = store.runs.create(runInput());
    expect(run).toEqual<Run>({
      runId: 'r1',
      jobName: 'daily_revenue',
      planHash: 'p1',
      jobHash: 'j1',
      kind: 'execute',
      rangeFrom: '2026-05-01',
      rangeTo: '2026-05-04',
      unit: 'day',
      timezone: 'UTC',
      writeMode: 'replace-partition',
      tier: 'manual',
      status: 'planned',
      cursor: '2026-05-01',
      partitionsTotal: 3,
      partitionsPublished: 0,
      partitionsFailed: 0,
      rowsWritten: 0,
      requestedBy: 'ana',
      executedBy: 'bo',
      settings: { sleepMs: 250, concurrency: 1 },
      haltReason: null,
      leaseOwner: null,
      leaseExpiresAt: null,
      createdAt: '2026-11-30T12:00:00.000Z',
      startedAt: null,
      finishedAt: null,
      updatedAt: '2026-11-30T12:00:00.000Z',
    });
    expect(store.runs.get('r1')).toEqual(run);
    expect(store.partitions.list('r1').map((p) => [p.seq, p.key, p.status, p.startAt, p.attempt])).toEqual([
      [0, '2026-05-01', 'pending', '2026-05-01T00:00:00.000Z', 0],
      [1, '2026-05-02', 'pending', '2026-05-02T00:00:00.000Z', 0],
      [2, '2026-05-03', 'pending', '2026-05-03T00:00:00.000Z', 0],
    ]);
    expect(store.db.prepare('SELECT settings_json FROM runs').pluck().get()).toBe('{"sleep_ms":250,"concurrency":1}');
    const created = store.audit.list({ runId: 'r1' });
    expect(created.map((e) => [e.event, e.toStatus, e.actor, e.detail])).toEqual([
      ['run.created', 'planned', 'bo', { kind: 'execute', planHash: 'p1', jobHash: 'j1', partitions: 3 }],
    ]);
  });

  it('keeps a Sandbox run marked as such, and a retune does not lose the mark', () => {
    store.runs.create(runInput({ settings: { sleepMs: 0, concurrency: 1, sandbox: true } }));
    expect(store.db.prepare('SELECT settings_json FROM runs').pluck().get()).toBe('{"sleep_ms":0,"concurrency":1,"sandbox":true}');
    expect(store.runs.updateSettings('r1', { sleepMs: 100 }, 'bo').settings).toEqual({ sleepMs: 100, concurrency: 1, sandbox: true });
  });

  it.each<[string, Partial<RunInput>, StoreError['code'], string]>([
    ['an unsaved plan', { runId: 'r2', planHash: 'p9' }, 'not-found', 'plan p9 is not saved; save the plan before creating run r2'],
    ['a repeated partition', { runId: 'r2', partitions: [{ key: 'a' }, { key: 'a' }] }, 'invalid', 'run r2 lists partition a twice'],
    [
      'a negative sleep',
      { runId: 'r2', settings: { sleepMs: -1 } },
      'invalid',
      'settings.sleepMs must be a whole number of ms, 0 or more (got -1)',
    ],
    [
      'zero concurrency',
      { runId: 'r2', settings: { concurrency: 0 } },
      'invalid',
      'settings.concurrency must be a whole number, 1 or more (got 0)',
    ],
    ['an existing run id', {}, 'exists', 'run r1 already exists'],
  ])('refuses %s and writes nothing', (_case, over, code, message) => {
    store.runs.create(runInput());
    const err = storeErrorOf(() => store.runs.create(runInput(over)));
    expect([err.code, err.message]).toEqual([code, message]);
    expect(store.db.prepare('SELECT count(*) FROM runs').pluck().get()).toBe(1);
    expect(store.db.prepare('SELECT count(*) FROM partitions').pluck().get()).toBe(3);
    expect(store.audit.list().filter((e) => e.event === 'run.created')).toHaveLength(1);
  });

  it('a run with no partitions has no cursor', () => {
    expect(store.runs.create(runInput({ partitions: [] }))).toMatchObject({ cursor: null, partitionsTotal: 0 });
  });
});

describe('runs.setStatus', () => {
  it('stamps start once, finish on stop, and audits from/to', () => {
    store.runs.create(runInput());
    at('2026-11-30T12:01:00.000Z');
    expect(store.runs.setStatus('r1', 'running', { actor: 'bo' })).toMatchObject({
      status: 'running',
      startedAt: '2026-11-30T12:01:00.000Z',
      finishedAt: null,
    });
    at('2026-11-30T12:02:00.000Z');
    expect(store.runs.setStatus('r1', 'halted', { actor: 'executor', haltReason: 'replication lag 45s > 30s' })).toMatchObject({
      status: 'halted',
      startedAt: '2026-11-30T12:01:00.000Z',
      finishedAt: '2026-11-30T12:02:00.000Z',
      haltReason: 'replication lag 45s > 30s',
    });
    at('2026-11-30T12:03:00.000Z');
    expect(store.runs.setStatus('r1', 'running', { actor: 'bo', event: 'run.resumed' })).toMatchObject({
      status: 'running',
      startedAt: '2026-11-30T12:01:00.000Z',
      finishedAt: null,
      haltReason: null,
    });
    // Same status again: nothing written, nothing audited.
    expect(store.runs.setStatus('r1', 'running', { actor: 'bo' }).updatedAt).toBe('2026-11-30T12:03:00.000Z');
    at('2026-11-30T12:04:00.000Z');
    expect(store.runs.setStatus('r1', 'succeeded', { actor: 'executor' })).toMatchObject({
      status: 'succeeded',
      finishedAt: '2026-11-30T12:04:00.000Z',
    });
    expect(events('r1')).toEqual([
      ['run.created', null, 'planned', 'bo'],
      ['run.running', 'planned', 'running', 'bo'],
      ['run.halted', 'running', 'halted', 'executor'],
      ['run.resumed', 'halted', 'running', 'bo'],
      ['run.succeeded', 'running', 'succeeded', 'executor'],
    ]);
    expect(store.audit.list({ runId: 'r1' })[2]?.detail).toEqual({ haltReason: 'replication lag 45s > 30s' });
  });

  it('refuses an unknown run', () => {
    const err = storeErrorOf(() => store.runs.setStatus('ghost', 'running', { actor: 'bo' }));
    expect([err.code, err.message]).toEqual(['not-found', 'run ghost does not exist']);
  });
});

describe('runs.updateSettings', () => {
  it('merges the live throttle and audits before and after', () => {
    store.runs.create(runInput());
    expect(store.runs.updateSettings('r1', { sleepMs: 1000 }, 'lead').settings).toEqual({ sleepMs: 1000, concurrency: 1 });
    const retune = store.audit.list({ runId: 'r1' }).at(-1);
    expect([retune?.event, retune?.actor, retune?.detail]).toEqual([
      'run.retuned',
      'lead',
      { from: { sleepMs: 250, concurrency: 1 }, to: { sleepMs: 1000, concurrency: 1 } },
    ]);
    const err = storeErrorOf(() => store.runs.updateSettings('r1', { concurrency: 1.5 }, 'lead'));
    expect([err.code, err.message]).toEqual(['invalid', 'settings.concurrency must be a whole number, 1 or more (got 1.5)']);
    expect(store.runs.get('r1')?.settings).toEqual({ sleepMs: 1000, concurrency: 1 });
  });
});

describe('runs.refreshCounters', () => {
  it('derives published, failed, rows and cursor from the partitions', () => {
    store.runs.create(runInput({ partitions: ['a', 'b', 'c', 'd'].map((key) => ({ key })) }));
    const t = (key: string, ...steps: ['running' | 'published' | 'failed' | 'skipped' | 'pending', number?][]) => {
      for (const [to, rows] of steps)
        store.partitions.transition('r1', key, to, rows === undefined ? {} : { rowsWritten: rows }, 'executor');
    };
    t('a', ['running'], ['published', 10]);
    t('b', ['running'], ['failed', 7]);
    t('c', ['skipped']);
    // Tamper with the cached counters to prove refresh recomputes rather than increments.
    store.db.prepare("UPDATE runs SET partitions_published = 99, rows_written = 99, cursor = 'zzz'").run();
    expect(store.runs.refreshCounters('r1')).toMatchObject({
      partitionsTotal: 4,
      partitionsPublished: 1,
      partitionsFailed: 1,
      rowsWritten: 10,
      cursor: 'b',
    });
    t('b', ['running'], ['published', 5]);
    expect(store.runs.get('r1')).toMatchObject({ partitionsPublished: 2, partitionsFailed: 0, rowsWritten: 15, cursor: 'd' });
    t('d', ['running'], ['published', 1]);
    expect(store.runs.get('r1')).toMatchObject({ partitionsPublished: 3, rowsWritten: 16, cursor: null });
    t('a', ['pending']);
    expect(store.runs.get('r1')).toMatchObject({ partitionsPublished: 2, rowsWritten: 6, cursor: 'a' });
    expect(() => store.runs.refreshCounters('ghost')).toThrow(new StoreError('run ghost does not exist', 'not-found'));
  });
});

describe('runs.list', () => {
  beforeEach(() => {
    const make = (runId: string, iso: string, over: Partial<RunInput>) => {
      at(iso);
      store.runs.create(runInput({ runId, partitions: [], executedBy: null, ...over }));
    };
    make('run-a', '2026-11-01T00:00:00.000Z', { jobName: 'daily_revenue', requestedBy: 'ana' });
    make('run-b', '2026-11-02T00:00:00.000Z', { jobName: 'partner_feed', requestedBy: 'Carla', executedBy: 'bo' });
    make('run-c', '2026-11-03T00:00:00.000Z', { jobName: 'daily_revenue', requestedBy: 'bo', kind: 'dry-run' });
    make('run_100%', '2026-11-04T00:00:00.000Z', { jobName: 'partner_feed', requestedBy: 'dee' });
    store.runs.setStatus('run-c', 'halted', { actor: 'executor', haltReason: 'Lock wait over 5s' });
  });

  it.each<[string, Parameters<Store['runs']['list']>[0], string[]]>([
    ['everything, newest first', {}, ['run_100%', 'run-c', 'run-b', 'run-a']],
    ['by job', { job: 'daily_revenue' }, ['run-c', 'run-a']],
    ['by status', { status: 'halted' }, ['run-c']],
    ['by job and status', { job: 'partner_feed', status: 'planned' }, ['run_100%', 'run-b']],
    ['search in requester, case-insensitive', { search: 'carla' }, ['run-b']],
    ['search in executor or requester', { search: 'bo' }, ['run-c', 'run-b']],
    ['search in halt reason', { search: 'lock wait' }, ['run-c']],
    ['search in job name', { search: 'partner' }, ['run_100%', 'run-b']],
    ['search treats % literally', { search: '%' }, ['run_100%']],
    ['search treats _ literally', { search: 'run_' }, ['run_100%']],
    ['an empty search matches all', { search: '' }, ['run_100%', 'run-c', 'run-b', 'run-a']],
    ['limit and offset', { limit: 2, offset: 1 }, ['run-c', 'run-b']],
    ['no match', { job: 'nope' }, []],
  ])('%s', (_case, query, ids) => {
    expect(store.runs.list(query).map((r) => r.runId)).toEqual(ids);
  });
});

describe('run leases', () => {
  beforeEach(() => {
    store.runs.create(runInput());
  });

  it('one owner at a time until the lease expires', () => {
    expect(store.runs.acquireLease('r1', 'app:1', 30_000)).toBe(true);
    expect(store.runs.get('r1')).toMatchObject({ leaseOwner: 'app:1', leaseExpiresAt: '2026-11-30T12:00:30.000Z' });
    expect(store.runs.acquireLease('r1', 'cli:2', 30_000)).toBe(false);
    expect(store.runs.renewLease('r1', 'cli:2', 30_000)).toBe(false);
    expect(store.runs.releaseLease('r1', 'cli:2')).toBe(false);
    at('2026-11-30T12:00:20.000Z');
    expect(store.runs.renewLease('r1', 'app:1', 30_000)).toBe(true);
    expect(store.runs.acquireLease('r1', 'app:1', 30_000)).toBe(true); // ours already: fine
    expect(store.runs.get('r1')?.leaseExpiresAt).toBe('2026-11-30T12:00:50.000Z');
    at('2026-11-30T12:00:49.999Z');
    expect(store.runs.acquireLease('r1', 'cli:2', 30_000)).toBe(false);
    at('2026-11-30T12:00:50.000Z');
    expect(store.runs.acquireLease('r1', 'cli:2', 30_000)).toBe(true); // expired: taken over
    expect(store.runs.renewLease('r1', 'app:1', 30_000)).toBe(false); // the old owner learns it lost the run
    expect(store.runs.releaseLease('r1', 'cli:2')).toBe(true);
    expect(store.runs.get('r1')).toMatchObject({ leaseOwner: null, leaseExpiresAt: null });
    expect(store.runs.acquireLease('r1', 'app:1', 1)).toBe(true);
    expect(
      store.audit
        .list({ runId: 'r1' })
        .slice(1)
        .map((e) => [e.event, e.actor, e.detail]),
    ).toEqual([
      ['run.lease-acquired', 'app:1', { expiresAt: '2026-11-30T12:00:30.000Z', previousOwner: null, previousExpiresAt: null }],
      [
        'run.lease-acquired',
        'cli:2',
        { expiresAt: '2026-11-30T12:01:20.000Z', previousOwner: 'app:1', previousExpiresAt: '2026-11-30T12:00:50.000Z' },
      ],
      ['run.lease-released', 'cli:2', {}],
      ['run.lease-acquired', 'app:1', { expiresAt: '2026-11-30T12:00:50.001Z', previousOwner: null, previousExpiresAt: null }],
    ]);
  });

  it('two stores on one file see one lease', () => {
    // Separate connections, as the app and the CLI would have.
    const dir = mkdtempSync(join(tmpdir(), 'store-lease-'));
    const a = openStore(join(dir, 'runbook.db'), { clock });
    const b = openStore(join(dir, 'runbook.db'), { clock });
    try {
      a.plans.save({ planHash: 'p1', requestId: 'REQ-1', jobName: 'daily_revenue', plan: {} });
      a.runs.create(runInput());
      expect([a.runs.acquireLease('r1', 'a', 10_000), b.runs.acquireLease('r1', 'b', 10_000)]).toEqual([true, false]);
      at('2026-11-30T12:00:10.000Z');
      expect([b.runs.acquireLease('r1', 'b', 10_000), a.runs.renewLease('r1', 'a', 10_000)]).toEqual([true, false]);
    } finally {
      a.close();
      b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each<[string, () => unknown, string]>([
    ['a zero ttl', () => store.runs.acquireLease('r1', 'x', 0), 'lease ttl must be a positive number of ms (got 0)'],
    ['an endless ttl', () => store.runs.renewLease('r1', 'x', Infinity), 'lease ttl must be a positive number of ms (got Infinity)'],
    ['an unknown run', () => store.runs.acquireLease('ghost', 'x', 1000), 'run ghost does not exist'],
  ])('refuses %s', (_case, call, message) => {
    expect(call).toThrow(message);
  });
});
