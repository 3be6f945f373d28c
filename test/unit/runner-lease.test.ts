/**
 * Who may drive a run: a lease held by a process of this machine that is gone is taken over at
 * once; one held by a process of another host is never judged from here — the refusal names
 * that host, the process and when its lease ends. An in-memory target stands in for the database.
 */
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GateError } from '../../shared/errors.ts';
import { Runner } from '../../electron/engine/executor/runner.ts';
import type { PartitionMark, PartitionTarget, PartitionWriteResult, WriteContext } from '../../electron/engine/executor/types.ts';
import { openStore, type Store } from '../../electron/engine/store/index.ts';
import type { Partition } from '../../shared/partitions.ts';

function memoryTarget(): PartitionTarget {
  const marks = new Map<string, PartitionMark>();
  return {
    label: 'memory',
    prepare: () => Promise.resolve(),
    readMarks: (keys) => Promise.resolve(new Map(keys.flatMap((k) => (marks.has(k) ? [[k, marks.get(k) as PartitionMark] as const] : [])))),
    writePartition: (partition: Partition, ctx: WriteContext): Promise<PartitionWriteResult> => {
      const result: PartitionWriteResult = {
        rowsWritten: 1,
        sourceCount: 1,
        sourceSums: {},
        targetCount: 1,
        targetSums: {},
        checksum: `h64:${partition.key}`,
        checks: [],
        duplicateKeys: 0,
      };
      ctx.onValidated(result);
      marks.set(partition.key, {
        partitionKey: partition.key,
        runId: ctx.runId,
        planHash: ctx.planHash,
        attempt: ctx.attempt,
        rowsWritten: 1,
        checksum: result.checksum,
        publishedAt: '',
      });
      return Promise.resolve(result);
    },
    measure: () => Promise.reject(new Error('not used')),
    reconcile: (partition) =>
      Promise.resolve({ partition, checks: [], targetCount: 1, markedRows: 1, markRunId: 'r1', duplicateKeys: 0, ok: true, problems: [] }),
    isTransient: () => false,
    isLockWait: () => false,
    close: () => Promise.resolve(),
  };
}

let store: Store;

beforeEach(() => {
  store = openStore(':memory:');
  store.plans.save({ planHash: 'p1', requestId: 'r1', jobName: 'j', plan: {} });
  store.runs.create({
    runId: 'r1',
    jobName: 'j',
    planHash: 'p1',
    jobHash: 'h',
    kind: 'execute',
    writeMode: 'overwrite-partition',
    settings: { sleepMs: 0, concurrency: 1 },
    partitions: [{ key: '2026-05-01', start: '2026-05-01T00:00:00Z', end: '2026-05-02T00:00:00Z' }],
    actor: 'ana',
  });
});
afterEach(() => store.close());

const run = () => new Runner({ store, runId: 'r1', target: memoryTarget(), actor: 'ana' }).run();

describe('a run whose lease another executor holds', () => {
  it('on another host: refused, naming the host, the process and when its lease ends', async () => {
    expect(store.runs.acquireLease('r1', 'db-runner-7:4242:1a2b3c4d', 60_000)).toBe(true);
    const expires = store.runs.get('r1')?.leaseExpiresAt;
    const err = await run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GateError);
    expect((err as GateError).reasons).toEqual([
      `held by process 4242 on host db-runner-7, lease until ${expires}; if that process is gone, resume after ${expires}`,
    ]);
    expect(store.partitions.list('r1')[0]?.status).toBe('pending');
  });

  it('on this machine, by a process that is gone: taken over at once', async () => {
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    expect(store.runs.acquireLease('r1', `${hostname()}:${gone}:1a2b3c4d`, 60_000)).toBe(true);
    expect((await run()).status).toBe('succeeded');
    // Its lease was given up on its behalf, then taken.
    const released = store.audit.list({ runId: 'r1' }).filter((e) => e.event === 'run.lease-released');
    expect(released.map((e) => e.actor)).toContain(`${hostname()}:${gone}:1a2b3c4d`);
  });
});
