/**
 * Stop conditions: a backfill competes with production traffic, so these are safety devices,
 * not tuning. Measured every `check_interval_ms` while the run goes (executor/throttle.ts): a
 * signal over its throttle level makes the run wait and continue by itself; over its critical
 * level, the panic file, or a partition's rows far from the dry run halt it (resumable, exit 3),
 * saying which condition fired with the measured value. The no-run window halts at the next
 * partition boundary.
 */
import { insideWindow, localHhmm } from '../../../shared/runEstimate.ts';
import { existsSync } from 'node:fs';
import { checkReadOnlySelect } from '../sql/readOnlySelect.ts';
import { THROTTLE_DEFAULTS, type Config, type Plan, type StopSettings } from '../../../shared/schemas.ts';
import { describeReading, formatSignalValue, levelOf, type SignalReading } from '../../../shared/signals.ts';
import type { PostgresHealth } from '../targets/postgres/health.ts';
import { signalSources, type SignalCondition, type WatchedSignal } from './signalSources.ts';

export interface Fired {
  condition: SignalCondition | 'row-diff' | 'no-run-window' | 'panic-file' | 'throttle-timeout';
  measured: string;
  threshold: string;
  /** one line for the operator: what fired and its value */
  reason: string;
}

/** One measurement of everything a run watches. */
export interface Assessment {
  readings: SignalReading[];
  /** a halt: at once (`now`: the partition in flight rolls back) or at the next partition boundary */
  halt: { fired: Fired; now: boolean } | null;
}

export interface ThrottlePolicy {
  intervalMs: number;
  /** every signal must stay under its level this long before a throttled run continues */
  settleMs: number;
  /** throttled continuously longer than this halts the run */
  maxThrottleMs: number;
}

/** What the runner's throttle asks; tests and other targets may bring their own. */
export interface StopMonitor {
  assess(): Promise<Assessment>;
  /** Before COMMIT: actual rows against the dry run's expected rows. */
  rowDiff(partitionKey: string, rowsWritten: number): Fired | null;
  policy(): ThrottlePolicy;
  close(): Promise<void>;
}

export interface StopConditionsOptions {
  plan: Plan;
  config: Config;
  targetConnection: string;
  /** the target table as the job names it (VACUUM probes watch it) */
  targetTable?: string;
  /** application_name of the backfill's own sessions (lock waiters are counted behind them) */
  applicationName: string;
  timeZone: string;
  /** expected rows per partition, from the dry run on record */
  expectedRows: ReadonlyMap<string, number>;
  /** the stop settings as the run executes them now (a `tune` changes them while it runs); default the plan's */
  current?: () => StopSettings;
  env?: NodeJS.ProcessEnv;
  now?: () => Date;
}

/** How long the confirmation of a reading over its level waits. */
const CONFIRM_MS = 300;

export function throttlePolicy(stop: StopSettings): ThrottlePolicy {
  return {
    intervalMs: stop.check_interval_ms,
    settleMs: stop.settle_ms ?? THROTTLE_DEFAULTS.settleIntervals * stop.check_interval_ms,
    maxThrottleMs: (stop.max_throttle_s ?? THROTTLE_DEFAULTS.maxThrottleS) * 1000,
  };
}

export class StopConditions implements StopMonitor {
  private readonly signals: WatchedSignal[];
  private readonly sessions: PostgresHealth[];

  constructor(private readonly o: StopConditionsOptions) {
    ({ signals: this.signals, sessions: this.sessions } = signalSources(o));
  }

  /** Checks what can be checked before the run starts: each probe's SQL is one read-only SELECT. */
  async check(): Promise<void> {
    for (const s of this.signals) if (s.sql) await checkReadOnlySelect(s.sql.text, { field: s.sql.field, params: [] });
  }

  private stop(): StopSettings {
    try {
      return this.o.current?.() ?? this.o.plan.stop;
    } catch {
      return this.o.plan.stop; // the ledger cannot be read this instant: the levels the run started with
    }
  }

  policy(): ThrottlePolicy {
    return throttlePolicy(this.stop());
  }

  async assess(): Promise<Assessment> {
    const stop = this.stop();
    const panic = this.panic(stop);
    if (panic) return { readings: [], halt: { fired: panic, now: true } };
    const readings = await Promise.all(this.signals.map((s) => this.read(s, stop)));
    const watched = readings.filter((r): r is SignalReading => r !== null);
    const critical = watched.find((r) => levelOf(r) === 'critical');
    if (critical) return { readings: watched, halt: { fired: firedBy(critical, this.signals), now: true } };
    const window = this.window(stop);
    return { readings: watched, halt: window ? { fired: window, now: false } : null };
  }

  /** One signal's reading against its levels now; null when no level is set for it. */
  private async read(s: WatchedSignal, stop: StopSettings): Promise<SignalReading | null> {
    const { max, critical } = s.levels(stop);
    if (max === undefined && critical === undefined) return null;
    const reading = (value: number | null, error?: string): SignalReading => ({
      signal: s.id,
      label: s.label,
      unit: s.unit,
      value,
      ...(max !== undefined ? { max } : {}),
      ...(critical !== undefined ? { critical } : {}),
      ...(error !== undefined ? { error } : {}),
    });
    try {
      let first = reading(await s.measure());
      if (s.confirm && levelOf(first) !== 'ok') {
        await new Promise((resolve) => setTimeout(resolve, CONFIRM_MS));
        first = reading(await s.measure());
      }
      return first;
    } catch (err) {
      return reading(null, err instanceof Error ? err.message : String(err));
    }
  }

  rowDiff(partitionKey: string, rowsWritten: number): Fired | null {
    const max = this.stop().max_row_diff_ratio;
    const expected = this.o.expectedRows.get(partitionKey);
    if (max === undefined || expected === undefined) return null;
    const ratio = Math.abs(rowsWritten - expected) / Math.max(expected, 1);
    if (ratio <= max) return null;
    return {
      condition: 'row-diff',
      measured: ratio.toFixed(4),
      threshold: `≤ ${max}`,
      reason: `row difference: partition ${partitionKey} wrote ${rowsWritten} rows but the dry run expected ${expected} (diff ratio ${ratio.toFixed(4)} > ${max})`,
    };
  }

  private panic(stop: StopSettings): Fired | null {
    const file = stop.panic_file;
    if (!file || !existsSync(file)) return null;
    return { condition: 'panic-file', measured: 'present', threshold: 'absent', reason: `panic file ${file} is present: stopping at once` };
  }

  private window(stop: StopSettings): Fired | null {
    const w = stop.no_run_window;
    if (!w) return null;
    const zone = w.timezone ?? this.o.timeZone;
    // The same reading of the window as the dry run's peak question (shared/runEstimate.ts).
    const hhmm = localHhmm((this.o.now ?? (() => new Date()))(), zone);
    const inside = insideWindow(hhmm, w);
    if (!inside) return null;
    return {
      condition: 'no-run-window',
      measured: `${hhmm} ${zone}`,
      threshold: `outside ${w.from}–${w.to}`,
      reason: `no-run window: it is ${hhmm} ${zone}, backfills must not run between ${w.from} and ${w.to}`,
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.sessions.map((s) => s.close()));
  }
}

/** A reading over its critical level, as the halt it causes. */
function firedBy(r: SignalReading, signals: readonly WatchedSignal[]): Fired {
  const condition = signals.find((s) => s.id === r.signal)?.condition ?? 'probe';
  return {
    condition,
    measured: r.value === null ? 'unknown' : formatSignalValue(r.value, r.unit),
    threshold: r.critical === undefined ? '–' : `≤ ${formatSignalValue(r.critical, r.unit)} (critical)`,
    reason: `critical level: ${describeReading(r)}`,
  };
}

/** Expected rows per partition from the dry run on record for this plan. */
export function expectedRowsFrom(dryRunBody: unknown): Map<string, number> {
  const rows = new Map<string, number>();
  const partitions =
    (dryRunBody as { partitions?: { partition?: { key?: string }; source?: { rows?: unknown } }[] } | undefined)?.partitions ?? [];
  for (const p of partitions) {
    const key = p.partition?.key;
    const n = Number(p.source?.rows);
    if (key && Number.isFinite(n)) rows.set(key, n);
  }
  return rows;
}
