/**
 * What the executor watches while it runs (replication lag, lock waits, probes) as readings with
 * two levels each, and the one judgement of a reading: under its levels, over its throttle level
 * (the run waits, then continues by itself) or over its critical level (the run halts at once).
 * Pure, so the engine, the CLI and the app's chart judge a reading the same way.
 */

/** One measurement of one signal. */
export interface SignalReading {
  /** stable id: `replication-lag`, `lock-wait`, `probe:<name>` */
  signal: string;
  /** what it is, for people: `replication lag on replica "replica"` */
  label: string;
  /** `s`, `ms` or '' */
  unit: string;
  /** null: it could not be measured (a reason to throttle, never a silent pass) */
  value: number | null;
  /** the throttle level: above it the run waits */
  max?: number;
  /** the critical level: above it the run halts at once */
  critical?: number;
  /** why it could not be measured */
  error?: string;
}

export type SignalLevel = 'ok' | 'throttle' | 'critical';

/** The one decision: where a reading stands against its levels. */
export function levelOf(r: SignalReading): SignalLevel {
  if (r.value === null) return 'throttle';
  if (r.critical !== undefined && r.value > r.critical) return 'critical';
  if (r.max !== undefined && r.value > r.max) return 'throttle';
  return 'ok';
}

export function formatSignalValue(value: number, unit: string): string {
  const shown = Number.isInteger(value) ? String(value) : Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(1);
  return unit ? `${shown} ${unit}` : shown;
}

/** `replication lag on replica "replica": 12.3 s > 5 s` — the value against the level it crossed. */
export function describeReading(r: SignalReading): string {
  if (r.value === null) return `${r.label} cannot be measured${r.error ? ` (${r.error})` : ''}`;
  const level = levelOf(r);
  const value = formatSignalValue(r.value, r.unit);
  if (level === 'critical' && r.critical !== undefined) return `${r.label}: ${value} > ${formatSignalValue(r.critical, r.unit)} (critical)`;
  if (level === 'throttle' && r.max !== undefined) return `${r.label}: ${value} > ${formatSignalValue(r.max, r.unit)}`;
  const bound = r.max ?? r.critical;
  return `${r.label}: ${value}${bound === undefined ? '' : ` ≤ ${formatSignalValue(bound, r.unit)}`}`;
}

/** What the executor is doing about its signals right now. */
export interface ThrottleState {
  /** when this throttle episode began (ISO) */
  since: string;
  /** the readings over their throttle level (or unmeasurable), newest */
  over: SignalReading[];
  /** every signal is back under its level; the run continues once this has lasted the settle time */
  settling: boolean;
}

/** `replication lag …: 12.3 s > 5 s; probe "cpu": 91 > 80` */
export function throttleReason(over: readonly SignalReading[]): string {
  return over.map(describeReading).join('; ');
}

/** The executor's events that move the throttle state (a structural subset of ExecutorEvent). */
export interface ThrottleEventLike {
  type: string;
  readings?: SignalReading[];
  since?: string;
  over?: SignalReading[];
}

/**
 * The throttle state after an executor event: the CLI's progress line and the app's live numbers
 * follow the same events through this one function.
 */
export function followThrottle(state: ThrottleState | null, e: ThrottleEventLike): ThrottleState | null {
  switch (e.type) {
    case 'throttled':
      return { since: e.since ?? new Date().toISOString(), over: e.over ?? [], settling: false };
    case 'signals': {
      if (!state) return null;
      const over = (e.readings ?? []).filter((r) => levelOf(r) !== 'ok');
      // Settling: every signal is back under its level; keep showing what throttled.
      return over.length > 0 ? { ...state, over, settling: false } : { ...state, settling: true };
    }
    case 'throttle-ended':
    case 'run-finished':
      return null;
    default:
      return state;
  }
}
