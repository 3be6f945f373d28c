/**
 * How `run-backfill` reports: a redrawn progress line on a terminal, plain lines in a log,
 * or one JSON object per line on stdout with --json (for scripts).
 */
import type { ExecutorEvent } from '../engine/executor/events.ts';
import { followThrottle, throttleReason, type ThrottleState } from '../../shared/signals.ts';

/** In a log (no terminal), how often a throttled run says it is still waiting. */
const STILL_THROTTLED_EVERY_MS = 30_000;

export interface Reporter {
  /** A human sentence (goes to stderr with --json so stdout stays machine-readable). */
  say(text: string): void;
  /** A structured record: a JSON line with --json, otherwise `text`. */
  record(type: string, data: Record<string, unknown>, text: string): void;
  event(event: ExecutorEvent): void;
  close(): void;
}

interface Streams {
  out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  err: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

export function createReporter(json: boolean, streams: Streams = { out: process.stdout, err: process.stderr }): Reporter {
  return json ? new JsonReporter(streams) : new TextReporter(streams);
}

class JsonReporter implements Reporter {
  constructor(private readonly s: Streams) {}
  say(text: string): void {
    this.s.err.write(`${text}\n`);
  }
  record(type: string, data: Record<string, unknown>): void {
    this.s.out.write(`${JSON.stringify({ type, ...data })}\n`);
  }
  event(event: ExecutorEvent): void {
    this.s.out.write(`${JSON.stringify({ ...event, at: new Date().toISOString() })}\n`);
  }
  close(): void {}
}

class TextReporter implements Reporter {
  private total = 0;
  private done = 0;
  private rows = 0;
  private started = Date.now();
  private current = '';
  private barShown = false;
  private throttle: ThrottleState | null = null;
  private throttleSaidAt = 0;
  private readonly tty: boolean;

  constructor(private readonly s: Streams) {
    this.tty = Boolean(s.err.isTTY);
  }

  say(text: string): void {
    this.clearBar();
    this.s.out.write(`${text}\n`);
    this.drawBar();
  }

  record(_type: string, _data: Record<string, unknown>, text: string): void {
    this.say(text);
  }

  event(event: ExecutorEvent): void {
    this.throttle = followThrottle(this.throttle, event);
    switch (event.type) {
      case 'run-started':
        this.total = event.toDo;
        this.done = 0;
        this.started = Date.now();
        this.say(
          `${event.resumed ? 'Resuming' : 'Starting'} run ${event.runId}: ${event.toDo} partition(s) to write, ${event.published} already published, concurrency ${event.concurrency}`,
        );
        break;
      case 'partition-resolved':
        this.say(`  ${event.key}: ${event.status} (${event.reason})`);
        break;
      case 'partition-started':
        this.current = event.key;
        this.drawBar();
        break;
      case 'partition-published':
        this.done += 1;
        this.rows += event.rows;
        if (!this.tty) this.say(`  ${event.key}: published ${event.rows} rows in ${event.ms} ms (${this.done}/${this.total})`);
        else this.drawBar();
        break;
      case 'partition-retry':
        this.say(`  ${event.key}: attempt ${event.attempt} failed (${event.error}); retrying in ${event.delayMs} ms`);
        break;
      case 'partition-failed':
        this.done += 1;
        this.say(`  ${event.key}: FAILED — ${event.error}`);
        break;
      case 'stopping':
        this.say(`Stopping at the next partition boundary: ${event.reason}`);
        break;
      case 'retuned':
        this.say(`Retuned: concurrency ${event.concurrency}, ${event.sleepMs} ms between partitions`);
        break;
      case 'throttled':
        this.throttleSaidAt = Date.now();
        this.say(
          `Throttled: ${event.reason} — partitions in flight finish; the next starts once every signal has stayed under its level for the settle time`,
        );
        break;
      case 'signals':
        if (this.throttle && !this.tty && Date.now() - this.throttleSaidAt >= STILL_THROTTLED_EVERY_MS) {
          this.throttleSaidAt = Date.now();
          this.say(`  ${this.throttleText(this.throttle)}`);
        } else this.drawBar();
        break;
      case 'throttle-ended':
        this.say(
          `Throttle ${event.outcome === 'resumed' ? 'ended' : `episode ended (run ${event.outcome})`} after ${formatDuration(event.throttledMs)}: ${event.reason}`,
        );
        break;
      case 'reconciled':
        this.say(`Reconciliation: ${event.ok} partition(s) agree${event.problems ? `, ${event.problems} do NOT` : ''}`);
        break;
      case 'run-finished':
        this.clearBar();
        this.barShown = false;
        this.say(
          `Run ${event.runId} ${event.status}: ${event.published} published, ${event.failed} failed, ${event.pending} pending, ${event.rows} rows, ${(event.ms / 1000).toFixed(1)} s${event.reason ? ` — ${event.reason}` : ''}`,
        );
        break;
    }
  }

  close(): void {
    this.clearBar();
  }

  private line(): string {
    const elapsedMin = (Date.now() - this.started) / 60_000;
    const rate = elapsedMin > 0 ? Math.round(this.rows / elapsedMin) : 0;
    const perPartition = this.done > 0 ? (Date.now() - this.started) / this.done : 0;
    const eta = this.done > 0 ? formatDuration(perPartition * (this.total - this.done)) : '…';
    const width = 24;
    const filled = this.total > 0 ? Math.round((this.done / this.total) * width) : 0;
    const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
    const state = this.throttle ? ` · ${this.throttleText(this.throttle)}` : '';
    return `[${bar}] ${this.done}/${this.total} · ${this.current} · ${rate.toLocaleString('en-US')} rows/min · ETA ${eta}${state}`;
  }

  /** `THROTTLED 1m 20s: replication lag on replica "r": 12.3 s > 5 s` */
  private throttleText(t: ThrottleState): string {
    const since = formatDuration(Date.now() - Date.parse(t.since));
    return t.settling
      ? `THROTTLED ${since}, settling: every signal back under its level (was ${throttleReason(t.over)})`
      : `THROTTLED ${since}: ${throttleReason(t.over)}`;
  }

  private drawBar(): void {
    if (!this.tty || this.total === 0) return;
    const cols = this.s.err.columns ?? 100;
    this.s.err.write(`\r\x1b[2K${this.line().slice(0, cols - 1)}`);
    this.barShown = true;
  }

  private clearBar(): void {
    if (this.tty && this.barShown) this.s.err.write('\r\x1b[2K');
  }
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}
