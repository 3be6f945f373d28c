/**
 * How History and `status` put a run into words: audit entries as sentences, and a run the
 * ledger calls `running` whose executor is gone shown as interrupted and resumable.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { TimelineEntry } from '../../shared/contractTypes.ts';
import { rawEntry, timelineSentence } from '../../shared/timelineSentence.ts';
import { runLiveness } from '../../electron/engine/executor/liveness.ts';

const entry = (over: Partial<TimelineEntry>): TimelineEntry => ({
  seq: 1,
  at: '2026-05-01T10:00:00.000Z',
  event: 'run.created',
  entity: 'run',
  entityId: 'bf-1',
  actor: 'bob',
  fromStatus: null,
  toStatus: null,
  detail: '',
  ...over,
});

describe('the timeline as sentences', () => {
  it.each([
    [
      entry({
        event: 'partition.published',
        entity: 'partition',
        entityId: '2026-05-03',
        toStatus: 'published',
        detail: '{"attempt":2,"rowsWritten":40}',
      }),
      'partition 2026-05-03 published: 40 rows (attempt 2)',
      'ok',
    ],
    [
      entry({
        event: 'partition.failed',
        entity: 'partition',
        entityId: '2026-05-04',
        toStatus: 'failed',
        detail: '{"attempt":1,"error":"lock timeout"}',
      }),
      'partition 2026-05-04 failed: lock timeout',
      'bad',
    ],
    [
      entry({ event: 'run.halted', toStatus: 'halted', detail: '{"haltReason":"replication lag 40 s over 30 s"}' }),
      'the run halted: replication lag 40 s over 30 s',
      'bad',
    ],
    [
      entry({ event: 'signoff.imported', entity: 'signoff', entityId: '3', detail: '{"signer":"alice"}' }),
      "alice's sign-off was recorded by bob",
      'ok',
    ],
    [
      entry({ event: 'evidence.added', entity: 'evidence', entityId: '7', detail: '{"kind":"dry-run"}' }),
      'bob captured evidence #7: dry-run',
      'info',
    ],
    [entry({ event: 'something.new', entity: 'thing', entityId: 'x', detail: 'not json' }), 'bob: something.new thing x', 'info'],
  ])('%#: %s', (e, text, tone) => {
    expect(timelineSentence(e)).toEqual({ text, tone });
  });

  it('shows the raw entry with its detail parsed, or as the text it is when the store holds something that is not JSON', () => {
    expect(JSON.parse(rawEntry(entry({ detail: '{"attempt":2}' }))) as unknown).toMatchObject({
      seq: 1,
      event: 'run.created',
      detail: { attempt: 2 },
    });
    expect(JSON.parse(rawEntry(entry({ detail: '{"attempt":' }))) as unknown).toMatchObject({ actor: 'bob', detail: '{"attempt":' });
    expect(JSON.parse(rawEntry(entry({}))) as unknown).toMatchObject({ detail: {} });
  });
});

describe("a running run's liveness", () => {
  const run = { runId: 'bf-1', status: 'running', leaseOwner: null as string | null, leaseExpiresAt: null as string | null };
  const later = new Date(Date.now() + 60_000).toISOString();
  it('is running while a live executor here holds the lease', () => {
    expect(runLiveness({ ...run, leaseOwner: `${hostname()}:${process.pid}:n`, leaseExpiresAt: later })).toEqual({
      state: 'running',
      hint: null,
    });
  });
  it('is interrupted, with the resume command, when the executor is gone, the lease ran out or nobody holds it', () => {
    const gone = runLiveness({ ...run, leaseOwner: `${hostname()}:2147483646:n`, leaseExpiresAt: later });
    expect(gone.state).toBe('interrupted');
    expect(gone.hint).toMatch(/its executor \(pid 2147483646 on .*\) is gone; resumable: run-backfill --resume --run-id bf-1$/);
    expect(runLiveness({ ...run, leaseOwner: `elsewhere:12:n`, leaseExpiresAt: '2026-01-01T00:00:00.000Z' }).state).toBe('interrupted');
    expect(runLiveness(run).hint).toMatch(/^no executor holds it/);
    expect(runLiveness({ ...run, status: 'halted' })).toEqual({ state: 'halted', hint: null });
  });
});
