/**
 * The throttle's decisions (electron/engine/executor/throttle.ts) on scripted measurements: an
 * episode starts when a signal goes over its level or cannot be measured, holds the gate shut,
 * ends only after every signal has stayed under its level for the settle time (no flapping),
 * and halts on a critical level (at once) or when it lasts longer than max_throttle_s. The
 * clock is scripted: each measurement is one second later. Real servers: the integration tests.
 */
import { describe, expect, it } from 'vitest';
import { describeReading, followThrottle, levelOf, type SignalReading } from '../../shared/signals.ts';
import { pauseAfter, Throttle } from '../../electron/engine/executor/throttle.ts';
import { throttleEpisodes, throttleTotals } from '../../electron/engine/executor/throttleEpisodes.ts';
import type { ExecutorEvent } from '../../electron/engine/executor/events.ts';
import type { Assessment, Fired, StopMonitor } from '../../electron/engine/safety/stopConditions.ts';

const lag = (value: number | null): SignalReading => ({
  signal: 'replication-lag',
  label: 'replication lag on replica "r"',
  unit: 's',
  value,
  max: 5,
  critical: 60,
  ...(value === null ? { error: 'connection refused' } : {}),
});

/** Measurements from a script, one second apart on the throttle's clock; the last repeats. */
function scripted(script: (SignalReading | Error)[], policy = { intervalMs: 1, settleMs: 3000, maxThrottleMs: 600_000 }) {
  let clock = 0;
  let i = 0;
  const monitor: StopMonitor = {
    assess: () => {
      clock += 1000;
      const step = script[Math.min(i++, script.length - 1)];
      if (step instanceof Error) return Promise.reject(step);
      const readings = step ? [step] : [];
      const critical = readings.find((r) => levelOf(r) === 'critical');
      const halt: Assessment['halt'] = critical
        ? {
            fired: {
              condition: 'replication-lag',
              measured: String(critical.value),
              threshold: '≤ 60 s',
              reason: describeReading(critical),
            },
            now: true,
          }
        : null;
      return Promise.resolve({ readings, halt });
    },
    rowDiff: () => null,
    policy: () => policy,
    close: () => Promise.resolve(),
  };
  const events: ExecutorEvent[] = [];
  const ledger: { event: string; detail: Record<string, unknown> }[] = [];
  const halts: { fired: Fired; now: boolean }[] = [];
  const throttle = new Throttle({
    monitor,
    emit: (e) => events.push(e),
    record: (event, detail) => ledger.push({ event, detail }),
    halt: (fired, now) => halts.push({ fired, now }),
    keepAlive: () => undefined,
    clock: () => clock,
  });
  return { throttle, events, ledger, halts, measured: () => i };
}

/** Lets the loop run until `done` says so (or 2,000 measurements). */
async function until(done: () => boolean, measured: () => number): Promise<void> {
  while (!done() && measured() < 2000) await new Promise((r) => setTimeout(r, 2));
}

describe('the throttle', () => {
  it('starts an episode over the level, holds the gate, and continues once settled', async () => {
    const s = scripted([lag(1), lag(8), lag(9), lag(2), lag(1), lag(1), lag(1)]);
    s.throttle.start();
    await s.throttle.gate(new AbortController().signal); // the first measurement: under the level
    await until(() => s.throttle.throttled, s.measured);
    let passed = false;
    const gate = s.throttle.gate(new AbortController().signal).then(() => (passed = true));
    await until(() => s.events.some((e) => e.type === 'throttle-ended'), s.measured);
    await gate;
    await s.throttle.stop();
    expect(passed).toBe(true);
    expect(s.ledger.map((l) => l.event)).toEqual(['run.throttled', 'run.throttle-ended']);
    const ended = s.ledger[1]?.detail;
    // over at seconds 2 and 3, under from 4: ends at 6, three seconds after the last reading over
    expect(ended).toMatchObject({ outcome: 'resumed', throttledMs: 4000 });
    expect(ended?.reason).toBe('replication lag on replica "r": 9 s > 5 s');
    expect(s.halts).toEqual([]);
  });

  it('does not flap: a signal that dips under its level between readings over it keeps the run throttled', async () => {
    const s = scripted([lag(8), lag(2), lag(8), lag(2), lag(8), lag(2), lag(1), lag(1), lag(1)]);
    s.throttle.start();
    await until(() => s.events.some((e) => e.type === 'throttle-ended'), s.measured);
    await s.throttle.stop();
    expect(s.ledger.filter((l) => l.event === 'run.throttled')).toHaveLength(1);
    expect(s.ledger.at(-1)?.detail).toMatchObject({ outcome: 'resumed', throttledMs: 7000 });
  });

  it('a signal that cannot be measured throttles, never passes silently; so does a monitor that throws', async () => {
    const s = scripted([lag(null)]);
    s.throttle.start();
    await until(() => s.throttle.throttled, s.measured);
    await s.throttle.stop();
    expect(s.ledger[0]?.detail.reason).toBe('replication lag on replica "r" cannot be measured (connection refused)');
    expect(s.ledger[1]?.detail.outcome).toBe('stopped');

    const t = scripted([new Error('probe exploded')]);
    t.throttle.start();
    await until(() => t.throttle.throttled, t.measured);
    await t.throttle.stop();
    expect(t.ledger[0]?.detail.reason).toBe('the stop conditions cannot be measured (probe exploded)');
  });

  it('a critical level halts at once, ending the episode as halted', async () => {
    const s = scripted([lag(8), lag(61)]);
    s.throttle.start();
    await until(() => s.halts.length > 0, s.measured);
    await s.throttle.stop();
    expect(s.halts).toEqual([
      { fired: expect.objectContaining({ reason: 'replication lag on replica "r": 61 s > 60 s (critical)' }) as Fired, now: true },
    ]);
    expect(s.ledger.map((l) => [l.event, l.detail.outcome])).toEqual([
      ['run.throttled', undefined],
      ['run.throttle-ended', 'halted'],
    ]);
    // the gate no longer waits: the runner sees its stop reason
    await s.throttle.gate(new AbortController().signal);
  });

  it('throttled longer than max_throttle_s halts at the partition boundary', async () => {
    const s = scripted([lag(8)], { intervalMs: 1, settleMs: 3000, maxThrottleMs: 5000 });
    s.throttle.start();
    await until(() => s.halts.length > 0, s.measured);
    await s.throttle.stop();
    expect(s.halts).toHaveLength(1);
    expect(s.halts[0]?.now).toBe(false);
    expect(s.halts[0]?.fired.condition).toBe('throttle-timeout');
    expect(s.halts[0]?.fired.reason).toBe('throttled for 6.0 s, longer than max_throttle_s 5: replication lag on replica "r": 8 s > 5 s');
  });

  it("an operator's stop opens the gate of a throttled run", async () => {
    const s = scripted([lag(8)]);
    s.throttle.start();
    await until(() => s.throttle.throttled, s.measured);
    const stop = new AbortController();
    const gate = s.throttle.gate(stop.signal);
    stop.abort();
    await gate;
    await s.throttle.stop();
    expect(s.ledger.at(-1)?.detail.outcome).toBe('stopped');
  });
});

describe('pacing', () => {
  it.each([
    // worked ms, sleep_ms, duty cycle, pause
    [1000, 0, undefined, 0],
    [1000, 250, undefined, 250],
    [1000, 0, 1, 0],
    [1000, 0, 0.5, 1000],
    [1000, 0, 0.25, 3000],
    [1000, 5000, 0.5, 5000],
    [0, 0, 0.1, 0],
  ])('a partition of %i ms with sleep %i ms and duty cycle %s pauses %i ms', (worked, sleepMs, duty, pause) => {
    expect(pauseAfter(worked, sleepMs, duty)).toBe(pause);
  });
});

describe('signals and episodes', () => {
  it('judges a reading against its levels and says why', () => {
    expect(levelOf(lag(5))).toBe('ok');
    expect(levelOf(lag(5.1))).toBe('throttle');
    expect(levelOf(lag(60.1))).toBe('critical');
    expect(levelOf(lag(null))).toBe('throttle');
    expect(describeReading(lag(12.34))).toBe('replication lag on replica "r": 12.3 s > 5 s');
    expect(describeReading(lag(2))).toBe('replication lag on replica "r": 2 s ≤ 5 s');
    expect(levelOf({ signal: 'probe:cpu', label: 'probe "cpu"', unit: '', value: 99, critical: 95 })).toBe('critical');
  });

  it('follows the throttle state through the events the CLI and the app both see', () => {
    let state = followThrottle(null, { type: 'signals', readings: [lag(8)] });
    expect(state).toBeNull();
    state = followThrottle(state, { type: 'throttled', since: '2026-07-01T03:00:00.000Z', over: [lag(8)] });
    state = followThrottle(state, { type: 'signals', readings: [lag(9)] });
    expect(state).toEqual({ since: '2026-07-01T03:00:00.000Z', over: [lag(9)], settling: false });
    state = followThrottle(state, { type: 'signals', readings: [lag(1)] });
    expect(state).toEqual({ since: '2026-07-01T03:00:00.000Z', over: [lag(9)], settling: true });
    expect(followThrottle(state, { type: 'throttle-ended' })).toBeNull();
  });

  it('reads the episodes from the audit log: ended, interrupted by a crash, and open now', () => {
    const entries = [
      {
        at: '2026-07-01T03:00:00.000Z',
        event: 'run.throttled',
        toStatus: null,
        detail: { since: '2026-07-01T03:00:00.000Z', reason: 'a' },
      },
      {
        at: '2026-07-01T03:00:09.000Z',
        event: 'run.throttle-ended',
        toStatus: null,
        detail: { throttledMs: 9000, outcome: 'resumed', reason: 'a at its worst' },
      },
      {
        at: '2026-07-01T03:01:00.000Z',
        event: 'run.throttled',
        toStatus: null,
        detail: { since: '2026-07-01T03:01:00.000Z', reason: 'b' },
      },
      { at: '2026-07-01T03:01:30.000Z', event: 'run.resumed', toStatus: 'running', detail: {} },
      {
        at: '2026-07-01T03:02:00.000Z',
        event: 'run.throttled',
        toStatus: null,
        detail: { since: '2026-07-01T03:02:00.000Z', reason: 'c' },
      },
    ];
    const episodes = throttleEpisodes(entries, Date.parse('2026-07-01T03:02:05.000Z'));
    expect(episodes.map((e) => [e.outcome, e.ms, e.reason])).toEqual([
      ['resumed', 9000, 'a at its worst'],
      ['interrupted', 30_000, 'b'],
      ['open', 5000, 'c'],
    ]);
    expect(throttleTotals(episodes)).toEqual({ throttledMs: 44_000, throttleCount: 3 });
  });
});
