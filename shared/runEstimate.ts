/**
 * How long a run will take, from the dry run's own per-partition timings, the throttle's pause
 * and the concurrency, and whether it would reach the plan's no-run window (the operator's
 * peak hours) before it finishes. Pure: the dry run, the execution gate and the plan form all
 * ask it the same way.
 */

/**
 * A write costs more than the dry run's read of the same partition (one aggregate over the
 * source, one over the target): it reads the source rows, deletes and inserts, then validates
 * (source and target again) and checksums — about three reads' worth of work.
 */
export const WRITE_COST_FACTOR = 3;

export interface NoRunWindow {
  from: string;
  to: string;
  timezone?: string;
}

/** Local `HH:MM` inside [from, to) — a window may wrap midnight (22:00–06:00). The stop condition asks the same. */
export function insideWindow(hhmm: string, w: { from: string; to: string }): boolean {
  return w.from <= w.to ? hhmm >= w.from && hhmm < w.to : hhmm >= w.from || hhmm < w.to;
}

/** One formatter per zone: an estimate asks for thousands of times, the stop condition once per tick. */
const hhmmFormats = new Map<string, Intl.DateTimeFormat>();

export function localHhmm(at: Date, timeZone: string): string {
  let format = hhmmFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    hhmmFormats.set(timeZone, format);
  }
  return format.format(at);
}

/**
 * The run's duration in ms: partitions go to `concurrency` slots in order, each slot writing one
 * (its read time × WRITE_COST_FACTOR) and then pausing `sleepMs` while partitions are still
 * waiting to start, as the executor does (runner.ts: the slot stays taken while it sleeps, and
 * no slot pauses once the queue is empty).
 */
export function estimateRunMs(partitionReadMs: readonly number[], sleepMs: number, concurrency: number): number {
  const slots = new Array<number>(Math.max(1, concurrency)).fill(0);
  const n = partitionReadMs.length;
  partitionReadMs.forEach((ms, i) => {
    let slot = 0;
    for (let s = 1; s < slots.length; s++) if ((slots[s] ?? 0) < (slots[slot] ?? 0)) slot = s;
    // When it finishes, the next `slots.length - 1` partitions have started elsewhere.
    const waiting = i + slots.length < n;
    slots[slot] = (slots[slot] ?? 0) + Math.max(0, ms) * WRITE_COST_FACTOR + (waiting ? sleepMs : 0);
  });
  return Math.round(Math.max(0, ...slots));
}

const MINUTE = 60_000;

/**
 * The first instant in [start, start + durationMs) that is inside the window (local wall clock
 * of `timeZone`, DST included), or null. A window opens at least once a day, so a run of a day
 * or more always reaches it.
 */
export function windowEntry(start: Date, durationMs: number, w: NoRunWindow, timeZone: string): Date | null {
  const zone = w.timezone ?? timeZone;
  const end = start.getTime() + durationMs;
  if (insideWindow(localHhmm(start, zone), w)) return start;
  // Walk minute boundaries: the window's edges are whole minutes of local time.
  let t = Math.ceil(start.getTime() / MINUTE) * MINUTE;
  for (let steps = 0; t < end && steps <= 2 * 24 * 60; steps++, t += MINUTE) {
    if (insideWindow(localHhmm(new Date(t), zone), w)) return new Date(t);
  }
  return null;
}

export interface RunEstimate {
  /** estimated duration of the writes still to do, in ms */
  ms: number;
  partitions: number;
  sleepMs: number;
  concurrency: number;
  /** what the estimate stands on, in words */
  basis: string;
  startsAt: string;
  endsAt: string;
  /** the no-run window, as the plan gives it */
  window: NoRunWindow | null;
  /** when the run would reach the window, or null */
  entersWindowAt: string | null;
}

export function runEstimate(input: {
  partitionReadMs: readonly number[];
  sleepMs: number;
  concurrency: number;
  window: NoRunWindow | undefined;
  timeZone: string;
  start: Date;
}): RunEstimate {
  const ms = estimateRunMs(input.partitionReadMs, input.sleepMs, input.concurrency);
  const window = input.window ?? null;
  const entry = window ? windowEntry(input.start, ms, window, input.timeZone) : null;
  const total = input.partitionReadMs.reduce((n, m) => n + m, 0);
  return {
    ms,
    partitions: input.partitionReadMs.length,
    sleepMs: input.sleepMs,
    concurrency: input.concurrency,
    basis: `${input.partitionReadMs.length} partition read(s) measured at ${total} ms in all, × ${WRITE_COST_FACTOR} for the write, + ${input.sleepMs} ms pause between partitions, ${input.concurrency} at a time`,
    startsAt: input.start.toISOString(),
    endsAt: new Date(input.start.getTime() + ms).toISOString(),
    window,
    entersWindowAt: entry ? entry.toISOString() : null,
  };
}

/** `3h 05m`, `12m 30s`, `45s`: a duration for people. */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(sec).padStart(2, '0')}s`;
  return `${sec}s`;
}
