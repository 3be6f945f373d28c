/**
 * History reads SQLite only, a page at a time: 10,000 runs searched by job, request id,
 * status and date, with the total for the scroll bar, fast enough to stay smooth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evidenceById, listRuns, runDetail } from '../../electron/engine/runbook/history.ts';
import { openStore, type Store } from '../../electron/engine/store/index.ts';

let store: Store;
let now = Date.parse('2026-01-01T00:00:00.000Z');
const JOBS = ['order-daily-mart', 'refund-reason-daily', 'events-hourly'];
const STATUSES = ['succeeded', 'failed', 'halted', 'paused'] as const;

beforeAll(() => {
  store = openStore(':memory:', { clock: () => new Date(now) });
  store.transaction(() => {
    for (let i = 0; i < 10_000; i++) {
      now += 3_600_000; // one run an hour: 10,000 hours from 2026-01-01
      const job = JOBS[i % 3] as string;
      const runId = `bf-${String(i).padStart(5, '0')}-${job}`;
      store.plans.save({ planHash: `${String(i).padStart(64, '0')}`, requestId: runId, jobName: job, plan: { i } });
      store.runs.create({
        runId,
        jobName: job,
        planHash: String(i).padStart(64, '0'),
        jobHash: 'j',
        kind: 'execute',
        partitions: [{ key: '2026-05-01' }],
        actor: i % 7 === 0 ? 'bob@h' : 'ann@h',
        requestedBy: i % 7 === 0 ? 'bob' : 'ann',
      });
      if (i % 10 === 0) store.runs.setStatus(runId, STATUSES[(i / 10) % 4] as (typeof STATUSES)[number], { actor: 'ann@h' });
    }
  });
  const last = 'bf-09999-order-daily-mart';
  store.evidence.add({ runId: null, planHash: String(9999).padStart(64, '0'), kind: 'dry-run', body: { jobHash: 'j' } });
  store.evidence.add({ runId: last, planHash: String(9999).padStart(64, '0'), kind: 'reconciliation', body: { ok: true } });
});
afterAll(() => store.close());

const page = (q: Partial<Parameters<typeof listRuns>[1]>) => listRuns(store, { limit: 200, offset: 0, ...q });

describe('History', () => {
  it('pages newest first, with the total', () => {
    const first = page({});
    expect(first.total).toBe(10_000);
    expect(first.runs).toHaveLength(200);
    expect(first.runs[0]?.runId).toBe('bf-09999-order-daily-mart');
    expect(
      page({ offset: 9_900, limit: 200 })
        .runs.map((r) => r.runId)
        .at(-1),
    ).toBe('bf-00000-order-daily-mart');
  });

  it.each<[string, Partial<Parameters<typeof listRuns>[1]>, number, string | undefined]>([
    ['by request id', { search: 'bf-0420' }, 10, 'bf-04209-order-daily-mart'],
    ['by a person', { search: 'bob' }, 1429, 'bf-09996-order-daily-mart'],
    ['by job', { job: 'events-hourly' }, 3333, 'bf-09998-events-hourly'],
    ['by status', { status: 'halted' }, 250, 'bf-09980-events-hourly'],
    ['by date, to inclusive', { from: '2026-01-02', to: '2026-01-02' }, 24, 'bf-00046-refund-reason-daily'],
    [
      'by everything at once',
      { job: 'order-daily-mart', status: 'failed', search: 'bf-00', from: '2026-01-01', to: '2026-02-28' },
      8,
      'bf-00930-order-daily-mart',
    ],
    ['a LIKE wildcard is literal', { search: '%' }, 0, undefined],
  ])('searches %s', (_what, q, total, newest) => {
    const r = page(q);
    expect(r.total).toBe(total);
    expect(r.runs[0]?.runId).toBe(newest);
  });

  it('pages through 10,000 runs: every page full, none repeated (time is printed, not asserted)', () => {
    const started = performance.now();
    const seen = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const r = page({ offset: i * 200 });
      expect(r.runs).toHaveLength(200);
      for (const run of r.runs) seen.add(run.runId);
    }
    console.info(`history: ${((performance.now() - started) / 10).toFixed(1)} ms per page at 10,000 runs`);
    expect(seen.size).toBe(2_000);
  });

  it("opens one run: timeline, its own and its plan's evidence, partitions", () => {
    const d = runDetail(store, 'bf-09999-order-daily-mart');
    expect(d.run.status).toBe('planned');
    expect(d.evidence.map((e) => e.kind)).toEqual(['dry-run', 'reconciliation']);
    expect(d.timeline.map((t) => t.event)).toEqual(['plan.saved', 'run.created', 'evidence.added', 'evidence.added']);
    expect(d.partitions).toEqual([
      {
        key: '2026-05-01',
        status: 'pending',
        rows: null,
        attempt: 0,
        error: null,
        sourceCount: null,
        targetCount: null,
        checksum: null,
        startedAt: null,
        finishedAt: null,
        durationMs: null,
      },
    ]);
    expect(evidenceById(store, d.evidence[1]?.id ?? 0).body).toEqual({ ok: true });
    expect(() => runDetail(store, 'nope')).toThrow(`no run "nope" in ${store.file}`);
  });
});
