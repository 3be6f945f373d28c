/**
 * When a partition's COMMIT was sent but its answer did not say it took effect
 * (CommitOutcomeUnknownError), the runner settles it by the target's marker — even during a
 * stop-now, whose late cancel is one way to cut that answer short. Pure logic: an in-memory
 * target stands in for the database, which the integration tests cover.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommitOutcomeUnknownError } from '../../electron/engine/executor/errors.ts';
import { Runner } from '../../electron/engine/executor/runner.ts';
import type {
  DryRunRow,
  PartitionMark,
  PartitionTarget,
  PartitionWriteResult,
  ReconcileRow,
  WriteContext,
} from '../../electron/engine/executor/types.ts';
import { openStore, type Store } from '../../electron/engine/store/index.ts';
import type { Partition } from '../../shared/partitions.ts';

const KEYS = ['2026-05-01', '2026-05-02'];

/** Publishes in memory; `cutShort` picks how the first partition's COMMIT answer is lost. */
class MemoryTarget implements PartitionTarget {
  readonly label = 'memory';
  readonly marks = new Map<string, PartitionMark>();
  constructor(
    private readonly cutShort: 'after commit' | 'before commit',
    private readonly onCutShort: () => void,
  ) {}

  prepare(): Promise<void> {
    return Promise.resolve();
  }

  readMarks(keys: readonly string[]): Promise<Map<string, PartitionMark>> {
    return Promise.resolve(new Map(keys.flatMap((k) => (this.marks.has(k) ? [[k, this.marks.get(k) as PartitionMark] as const] : []))));
  }

  writePartition(partition: Partition, ctx: WriteContext): Promise<PartitionWriteResult> {
    const result: PartitionWriteResult = {
      rowsWritten: 3,
      sourceCount: 3,
      sourceSums: {},
      targetCount: 3,
      targetSums: {},
      checksum: `h64:${partition.key}`,
      checks: [],
      duplicateKeys: 0,
    };
    ctx.onValidated(result);
    const mark: PartitionMark = {
      partitionKey: partition.key,
      runId: ctx.runId,
      planHash: ctx.planHash,
      attempt: ctx.attempt,
      rowsWritten: 3,
      checksum: result.checksum,
      publishedAt: '',
    };
    if (partition.key !== KEYS[0]) {
      this.marks.set(partition.key, mark);
      return Promise.resolve(result);
    }
    // A stop-now arrives while the COMMIT is in flight; its cancel cuts the answer short.
    this.onCutShort();
    if (this.cutShort === 'after commit') this.marks.set(partition.key, mark);
    const cancel = Object.assign(new Error('canceling statement due to user request'), { code: '57014' });
    return Promise.reject(new CommitOutcomeUnknownError(partition.key, cancel));
  }

  measure(): Promise<DryRunRow> {
    return Promise.reject(new Error('not used'));
  }

  reconcile(partition: Partition): Promise<ReconcileRow> {
    const mark = this.marks.get(partition.key);
    return Promise.resolve({
      partition,
      checks: [],
      targetCount: 3,
      markedRows: mark?.rowsWritten ?? null,
      markRunId: mark?.runId ?? null,
      duplicateKeys: 0,
      ok: Boolean(mark),
      problems: [],
    });
  }

  isTransient(err: unknown): boolean {
    return (err as { code?: string }).code === '08006';
  }

  isLockWait(): boolean {
    return false;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

let store: Store;

beforeEach(() => {
  store = openStore(':memory:');
  store.plans.save({ planHash: 'p1', requestId: 'REQ-1', jobName: 'j', plan: {} });
  store.runs.create({
    runId: 'r1',
    jobName: 'j',
    planHash: 'p1',
    jobHash: 'h',
    kind: 'execute',
    writeMode: 'overwrite-partition',
    settings: { sleepMs: 0, concurrency: 1 },
    partitions: KEYS.map((key) => ({ key, start: `${key}T00:00:00Z`, end: null })),
    actor: 'ana',
  });
});
afterEach(() => store.close());

async function runWith(
  cutShort: 'after commit' | 'before commit',
): Promise<{ status: string; partitions: Record<string, string>; events: string[] }> {
  const events: string[] = [];
  // Called during runner.run(), once `runner` exists.
  const target = new MemoryTarget(cutShort, () => runner.abortNow());
  const runner = new Runner({
    store,
    runId: 'r1',
    target,
    actor: 'ana',
    retryBaseMs: 1,
    onEvent: (e) => events.push(e.type === 'partition-resolved' ? `${e.type} ${e.key} ${e.status}: ${e.reason}` : e.type),
  });
  const outcome = await runner.run();
  const partitions = Object.fromEntries(store.partitions.list('r1').map((p) => [p.key, p.status]));
  return { status: outcome.status, partitions, events };
}

describe('a COMMIT whose answer was cut short by a stop-now', () => {
  it('that took effect is published, found by its marker', async () => {
    const { status, partitions, events } = await runWith('after commit');
    expect(partitions).toEqual({ '2026-05-01': 'published', '2026-05-02': 'pending' });
    expect(events).toContain('partition-resolved 2026-05-01 published: COMMIT reached the target before its round trip was cut short');
    expect(status).toBe('paused');
  });

  it('that did not take effect goes back to pending: no marker, and the stop-now stands', async () => {
    const { status, partitions } = await runWith('before commit');
    expect(partitions).toEqual({ '2026-05-01': 'pending', '2026-05-02': 'pending' });
    expect(status).toBe('paused');
  });
});
