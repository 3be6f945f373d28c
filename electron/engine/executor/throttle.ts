/**
 * The throttle, as gh-ost's: one loop measures every watched signal each check interval while
 * the run goes; the executor asks it before starting each partition (`gate`). A signal over its
 * throttle level — or one that cannot be measured — starts an episode: partitions in flight
 * finish, no new one starts, and the run continues by itself once every signal has stayed under
 * its level for the settle time (hysteresis, so it does not flap). A critical level or the panic
 * file halts at once (the partition in flight rolls back); the no-run window and an episode
 * longer than max_throttle_s halt at the next boundary. Each episode is kept in the ledger's
 * audit log (`run.throttled`, then `run.throttle-ended`), where metrics and the note find it.
 */
import { levelOf, throttleReason, type SignalReading } from '../../../shared/signals.ts';
import type { Assessment, Fired, StopMonitor, ThrottlePolicy } from '../safety/stopConditions.ts';
import type { ExecutorEvent, ThrottleOutcome } from './events.ts';
import { sleep } from './retry.ts';

export interface ThrottleOptions {
  monitor: StopMonitor;
  emit: (event: ExecutorEvent) => void;
  /** writes an episode's start or end to the ledger (never throws) */
  record: (event: 'run.throttled' | 'run.throttle-ended', detail: Record<string, unknown>) => void;
  /** a halt: `now` rolls back the partitions in flight, else they finish */
  halt: (fired: Fired, now: boolean) => void;
  /** each tick: keeps the run's lease while the run waits */
  keepAlive: () => void;
  clock?: () => number;
}

interface Episode {
  since: number;
  /** the last measurement with a signal over its level */
  lastOver: number;
  over: SignalReading[];
  /** the worst value each signal reached in this episode */
  peak: Map<string, SignalReading>;
}

export class Throttle {
  private episode: Episode | null = null;
  private measured = false;
  private halted = false;
  private readonly stopped = new AbortController();
  private loop: Promise<void> | null = null;
  private wake: (() => void)[] = [];
  private readonly now: () => number;

  constructor(private readonly o: ThrottleOptions) {
    this.now = o.clock ?? Date.now;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Ends the loop; an episode still open ends as `outcome` (the run stopped while throttled). */
  async stop(outcome: ThrottleOutcome = 'stopped'): Promise<void> {
    this.stopped.abort();
    this.notify();
    await this.loop;
    if (this.episode) this.end(outcome);
  }

  /** True while no new partition may start. */
  get throttled(): boolean {
    return this.episode !== null;
  }

  /**
   * Before a partition: waits for the first measurement, then for as long as the run is
   * throttled. Returns when it may go on — or when `signal` aborts (an operator's stop) or the
   * throttle halted the run; the runner then sees its stop reason.
   */
  async gate(signal: AbortSignal): Promise<void> {
    while (!signal.aborted && !this.halted && !this.stopped.signal.aborted && (!this.measured || this.episode)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.wake.push(done);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  private notify(): void {
    const waiting = this.wake;
    this.wake = [];
    for (const w of waiting) w();
  }

  private async run(): Promise<void> {
    // After a halt it keeps ticking, measuring nothing: the partitions in flight still need the lease.
    while (!this.stopped.signal.aborted) {
      const policy = this.o.monitor.policy();
      if (!this.halted) {
        const assessment = await this.o.monitor.assess().catch((err: unknown): Assessment => ({
          readings: [
            {
              signal: 'stop-conditions',
              label: 'the stop conditions',
              unit: '',
              value: null,
              error: err instanceof Error ? err.message : String(err),
            },
          ],
          halt: null,
        }));
        if (this.stopped.signal.aborted) break;
        this.judge(assessment, policy);
        this.measured = true;
        this.notify();
      }
      this.o.keepAlive();
      await sleep(policy.intervalMs, this.stopped.signal);
    }
  }

  /** One measurement's consequence: halt, start or extend an episode, or end it once settled. */
  private judge(a: Assessment, policy: ThrottlePolicy): void {
    if (a.readings.length > 0) this.o.emit({ type: 'signals', readings: a.readings });
    if (a.halt) {
      this.halted = true;
      if (this.episode) this.end('halted');
      this.o.halt(a.halt.fired, a.halt.now);
      return;
    }
    const at = this.now();
    const over = a.readings.filter((r) => levelOf(r) !== 'ok');
    if (over.length > 0) this.over(over, at);
    else if (this.episode && at - this.episode.lastOver >= policy.settleMs) this.end('resumed');
    const e = this.episode;
    if (e && at - e.since > policy.maxThrottleMs) {
      const reason = `throttled for ${seconds(at - e.since)} s, longer than max_throttle_s ${policy.maxThrottleMs / 1000}: ${throttleReason(e.over)}`;
      this.halted = true;
      this.end('halted');
      this.o.halt(
        { condition: 'throttle-timeout', measured: `${seconds(at - e.since)} s`, threshold: `≤ ${policy.maxThrottleMs / 1000} s`, reason },
        false,
      );
    }
  }

  private over(over: SignalReading[], at: number): void {
    const e = this.episode;
    if (e) {
      e.lastOver = at;
      e.over = over;
      for (const r of over) e.peak.set(r.signal, worse(e.peak.get(r.signal), r));
      return;
    }
    this.episode = { since: at, lastOver: at, over, peak: new Map(over.map((r) => [r.signal, r])) };
    const reason = throttleReason(over);
    const since = new Date(at).toISOString();
    this.o.record('run.throttled', { since, reason, signals: over });
    this.o.emit({ type: 'throttled', since, over, reason });
  }

  private end(outcome: ThrottleOutcome): void {
    const e = this.episode;
    if (!e) return;
    this.episode = null;
    const throttledMs = this.now() - e.since;
    const since = new Date(e.since).toISOString();
    const reason = throttleReason([...e.peak.values()]);
    this.o.record('run.throttle-ended', { since, throttledMs, outcome, reason, peak: [...e.peak.values()] });
    this.o.emit({ type: 'throttle-ended', since, throttledMs, reason, outcome });
  }
}

/** The reading further over its level: an unmeasurable one counts as the worst. */
function worse(a: SignalReading | undefined, b: SignalReading): SignalReading {
  if (!a || a.value === null) return a ?? b;
  if (b.value === null) return b;
  return b.value > a.value ? b : a;
}

const seconds = (ms: number): string => (ms / 1000).toFixed(1);

/**
 * The pause after a partition: at least `sleepMs`, and with a duty cycle F, long enough that the
 * executor works at most F of wall time — d × (1 − F) / F after a partition that took d ms.
 */
export function pauseAfter(workedMs: number, sleepMs: number, dutyCycle: number | undefined): number {
  const duty = dutyCycle !== undefined && dutyCycle < 1 ? Math.round((Math.max(0, workedMs) * (1 - dutyCycle)) / dutyCycle) : 0;
  return Math.max(sleepMs, duty);
}
