import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  openStore,
  PARTITION_STATUSES,
  PARTITION_TRANSITIONS,
  StoreError,
  type PartitionStatus,
  type Store,
} from '../../electron/engine/store/index.ts';

let nowMs = 0;
const clock = () => new Date(nowMs);
const at = (iso: string) => {
  nowMs = Date.parse(iso);
};
let store: Store;

beforeEach(() => {
  at('2026-11-30T12:00:00.000Z');
  store = openStore(':memory:', { clock });
  store.plans.save({ planHash: 'p1', requestId: 'REQ-1', jobName: 'daily_revenue', plan: {} });
  store.runs.create({
    runId: 'r1',
    jobName: 'daily_revenue',
    planHash: 'p1',
    jobHash: 'j1',
    kind: 'execute',
    actor: 'ana',
    partitions: ['2026-05-01', '2026-05-02', '2026-05-03'].map((key) => ({ key })),
  });
});
afterEach(() => store.close());

const KEY = '2026-05-01';
const move = (to: PartitionStatus, patch = {}, detail?: Record<string, unknown>) =>
  store.partitions.transition('r1', KEY, to, patch, 'executor', detail);

/** How to bring a fresh (pending) partition to each status. */
const PATH_TO: Record<PartitionStatus, PartitionStatus[]> = {
  pending: [],
  running: ['running'],
  validated: ['running', 'validated'],
  published: ['running', 'published'],
  failed: ['running', 'failed'],
  skipped: ['skipped'],
};

// Written out here, not imported, so a change to the rules must change this test too.
const ALLOWED: [PartitionStatus, PartitionStatus][] = [
  ['pending', 'running'],
  ['pending', 'skipped'],
  ['running', 'validated'],
  ['running', 'failed'],
  ['running', 'pending'],
  ['running', 'published'],
  ['validated', 'published'],
  ['validated', 'failed'],
  ['validated', 'pending'],
  ['published', 'pending'],
  ['failed', 'running'],
  ['failed', 'pending'],
  ['skipped', 'pending'],
];
const isAllowed = (from: PartitionStatus, to: PartitionStatus) => ALLOWED.some(([f, t]) => f === from && t === to);
const DISALLOWED = PARTITION_STATUSES.flatMap((from) =>
  PARTITION_STATUSES.filter((to) => !isAllowed(from, to)).map((to) => [from, to] as const),
);

describe('partition transitions', () => {
  it('the code table is the documented one', () => {
    const fromCode = PARTITION_STATUSES.flatMap((from) => PARTITION_TRANSITIONS[from].map((to) => [from, to]));
    expect(fromCode).toEqual(ALLOWED);
    expect(DISALLOWED).toHaveLength(23);
  });

  it.each(ALLOWED)('%s → %s is allowed and audited', (from, to) => {
    for (const step of PATH_TO[from]) move(step);
    const before = store.audit.list({ runId: 'r1' }).length;
    expect(move(to).status).toBe(to);
    expect(store.partitions.get('r1', KEY)?.status).toBe(to);
    const entries = store.audit.list({ runId: 'r1' });
    expect(entries).toHaveLength(before + 1);
    expect(entries.at(-1)).toMatchObject({
      entity: 'partition',
      entityId: KEY,
      event: `partition.${to}`,
      fromStatus: from,
      toStatus: to,
      actor: 'executor',
    });
  });

  it.each(DISALLOWED)('%s → %s is refused, leaving everything as it was', (from, to) => {
    for (const step of PATH_TO[from]) move(step);
    const partitionBefore = store.partitions.get('r1', KEY);
    const auditBefore = store.audit.list().length;
    const allowed = PARTITION_TRANSITIONS[from].join(', ');
    expect(() => move(to, { error: 'x' })).toThrow(
      new StoreError(`partition ${KEY} of run r1 cannot go from ${from} to ${to} (from ${from} it may go to: ${allowed})`, 'transition'),
    );
    expect(store.partitions.get('r1', KEY)).toEqual(partitionBefore);
    expect(store.audit.list()).toHaveLength(auditBefore);
  });

  it('says which partition and run, in the documented words', () => {
    move('running');
    move('published');
    let caught: unknown;
    try {
      move('validated');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(StoreError);
    expect((caught as StoreError).code).toBe('transition');
    expect((caught as StoreError).message).toBe(
      'partition 2026-05-01 of run r1 cannot go from published to validated (from published it may go to: pending)',
    );
  });

  it('refuses an unknown partition', () => {
    expect(() => store.partitions.transition('r1', '1999-01-01', 'running', {}, 'x')).toThrow(
      new StoreError('partition 1999-01-01 of run r1 does not exist', 'not-found'),
    );
  });
});

describe('attempts, timings and results', () => {
  it('counts attempts, times each one, and starts each attempt clean', () => {
    at('2026-11-30T12:00:00.000Z');
    expect(move('running')).toMatchObject({ attempt: 1, startedAt: '2026-11-30T12:00:00.000Z', finishedAt: null, durationMs: null });
    at('2026-11-30T12:00:02.500Z');
    expect(
      move('failed', { rowsWritten: 40, sourceCount: 41, targetCount: 40, error: 'count mismatch: source 41, target 40' }),
    ).toMatchObject({
      status: 'failed',
      attempt: 1,
      rowsWritten: 40,
      sourceCount: 41,
      targetCount: 40,
      error: 'count mismatch: source 41, target 40',
      finishedAt: '2026-11-30T12:00:02.500Z',
      durationMs: 2500,
    });
    at('2026-11-30T12:01:00.000Z');
    expect(move('running')).toMatchObject({
      attempt: 2,
      startedAt: '2026-11-30T12:01:00.000Z',
      finishedAt: null,
      durationMs: null,
      error: null,
      rowsWritten: null,
      sourceCount: null,
      targetCount: null,
      checksum: null,
    });
    at('2026-11-30T12:01:01.000Z');
    const sums = { amount: '1234.50', qty: 41 };
    expect(move('validated', { sourceCount: 41, targetCount: 41, sourceSums: sums, targetSums: sums, rowsWritten: 41 })).toMatchObject({
      status: 'validated',
      finishedAt: null,
      sourceSums: { amount: '1234.50', qty: 41 },
    });
    at('2026-11-30T12:01:03.000Z');
    // A patch field left out keeps its value; null clears it.
    expect(move('published', { checksum: 'sha256:abc', targetSums: null })).toEqual({
      runId: 'r1',
      key: KEY,
      seq: 0,
      startAt: null,
      endAt: null,
      status: 'published',
      rowsWritten: 41,
      sourceCount: 41,
      sourceSums: { amount: '1234.50', qty: 41 },
      targetCount: 41,
      targetSums: null,
      checksum: 'sha256:abc',
      attempt: 2,
      error: null,
      startedAt: '2026-11-30T12:01:00.000Z',
      finishedAt: '2026-11-30T12:01:03.000Z',
      durationMs: 3000,
    });
    move('pending', {}, { reason: 'reprocess requested by lead' });
    expect(move('running').attempt).toBe(3);
    expect(store.partitions.get('r1', KEY)?.attempt).toBe(3);
  });

  it('records the patch and the caller detail in the audit row', () => {
    move('running');
    move('failed', { error: 'timeout', rowsWritten: undefined }, { sqlstate: '57014' });
    expect(store.audit.list({ runId: 'r1' }).at(-1)?.detail).toEqual({ attempt: 1, error: 'timeout', sqlstate: '57014' });
  });

  it('keeps the run ledger in step within the same transaction', () => {
    move('running');
    move('published', { rowsWritten: 12 });
    expect(store.runs.get('r1')).toMatchObject({ partitionsPublished: 1, rowsWritten: 12, cursor: '2026-05-02' });
  });
});

describe('reading partitions', () => {
  it('lists by seq, filters by status, and counts every status', () => {
    store.partitions.transition('r1', '2026-05-02', 'skipped', {}, 'ana');
    store.partitions.transition('r1', '2026-05-03', 'running', {}, 'executor');
    expect(store.partitions.list('r1').map((p) => [p.key, p.status])).toEqual([
      ['2026-05-01', 'pending'],
      ['2026-05-02', 'skipped'],
      ['2026-05-03', 'running'],
    ]);
    expect(store.partitions.listByStatus('r1', 'running').map((p) => p.key)).toEqual(['2026-05-03']);
    expect(store.partitions.countByStatus('r1')).toEqual({ pending: 1, running: 1, validated: 0, published: 0, failed: 0, skipped: 1 });
    expect(store.partitions.countByStatus('ghost')).toEqual({ pending: 0, running: 0, validated: 0, published: 0, failed: 0, skipped: 0 });
    expect(store.partitions.get('r1', 'nope')).toBeUndefined();
    expect(store.partitions.list('ghost')).toEqual([]);
  });
});
