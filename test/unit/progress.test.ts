/**
 * The CLI's progress as a person reads it (electron/cli/progress.ts): on a terminal the redrawn
 * line says the run is throttled — which signal, its value against its level, for how long —
 * and then that it settles; in a log, plain lines say when an episode starts and ends.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createReporter } from '../../electron/cli/progress.ts';
import type { SignalReading } from '../../shared/signals.ts';

function streams(tty: boolean) {
  const text = { out: '', err: '' };
  const sink = (key: 'out' | 'err') =>
    Object.assign(
      new Writable({
        write(chunk: Buffer, _enc, done) {
          text[key] += chunk.toString();
          done();
        },
      }),
      { isTTY: tty, columns: 400 },
    );
  return { text, streams: { out: sink('out'), err: sink('err') } };
}

const lag = (value: number): SignalReading => ({
  signal: 'replication-lag',
  label: 'replication lag on replica "r"',
  unit: 's',
  value,
  max: 5,
});
const since = new Date(Date.now() - 75_000).toISOString();

describe('the progress line', () => {
  it('on a terminal: THROTTLED with the signal against its level and for how long, then settling', () => {
    const { text, streams: s } = streams(true);
    const r = createReporter(false, s);
    r.event({ type: 'run-started', runId: 'bf-1', total: 10, toDo: 10, published: 0, resumed: false, concurrency: 1 });
    r.event({ type: 'throttled', since, over: [lag(12.3)], reason: 'replication lag on replica "r": 12.3 s > 5 s' });
    r.event({ type: 'signals', readings: [lag(14)] });
    expect(text.err.split('\r\x1b[2K').at(-1)).toMatch(/· THROTTLED 1m 1[45]s: replication lag on replica "r": 14 s > 5 s$/);
    r.event({ type: 'signals', readings: [lag(1)] });
    expect(text.err.split('\r\x1b[2K').at(-1)).toMatch(
      /· THROTTLED 1m 1[45]s, settling: every signal back under its level \(was replication lag on replica "r": 14 s > 5 s\)$/,
    );
    r.event({
      type: 'throttle-ended',
      since,
      throttledMs: 78_000,
      reason: 'replication lag on replica "r": 14 s > 5 s',
      outcome: 'resumed',
    });
    r.event({ type: 'partition-started', key: '2026-05-02', attempt: 1 });
    expect(text.err.split('\r\x1b[2K').at(-1)).not.toContain('THROTTLED');
    expect(text.out).toContain('Throttle ended after 1m 18s: replication lag on replica "r": 14 s > 5 s');
  });

  it('in a log: a line when an episode starts and one when it ends', () => {
    const { text, streams: s } = streams(false);
    const r = createReporter(false, s);
    r.event({ type: 'throttled', since, over: [lag(12.3)], reason: 'replication lag on replica "r": 12.3 s > 5 s' });
    r.event({
      type: 'throttle-ended',
      since,
      throttledMs: 2_000_000,
      reason: 'replication lag on replica "r": 30 s > 5 s',
      outcome: 'halted',
    });
    expect(text.out.split('\n').filter(Boolean)).toEqual([
      'Throttled: replication lag on replica "r": 12.3 s > 5 s — partitions in flight finish; the next starts once every signal has stayed under its level for the settle time',
      'Throttle episode ended (run halted) after 33m 20s: replication lag on replica "r": 30 s > 5 s',
    ]);
  });

  it('with --json: every event one JSON line, the readings with their levels', () => {
    const { text, streams: s } = streams(false);
    createReporter(true, s).event({ type: 'signals', readings: [lag(3)] });
    expect(JSON.parse(text.out)).toMatchObject({ type: 'signals', readings: [{ signal: 'replication-lag', value: 3, max: 5 }] });
  });
});
