/**
 * Stop conditions: a backfill competes with production traffic, so these are safety devices,
 * not tuning. Checked before each partition and, while a statement runs, every
 * `check_interval_ms`. A condition that fires halts the run (resumable, exit 3) and says which
 * condition fired with the measured value.
 */
import { existsSync } from 'node:fs';
import type { Config, Plan } from '../../../shared/schemas.ts';
import { InputError } from '../../../shared/errors.ts';
import { postgresEndpoint } from '../runbook/prepare.ts';
import { PostgresHealth } from '../targets/postgres/health.ts';

export interface Fired {
  condition: 'replication-lag' | 'lock-wait' | 'row-diff' | 'no-run-window' | 'panic-file' | 'probe';
  measured: string;
  threshold: string;
  /** one line for the operator: what fired and its value */
  reason: string;
}

/** What the runner asks; tests and other targets may bring their own. */
export interface StopMonitor {
  before(): Promise<Fired | null>;
  during(): Promise<Fired | null>;
  /** Before COMMIT: actual rows against the dry run's expected rows. */
  rowDiff(partitionKey: string, rowsWritten: number): Fired | null;
  readonly intervalMs: number;
  close(): Promise<void>;
}

export interface StopConditionsOptions {
  plan: Plan;
  config: Config;
  targetConnection: string;
  /** application_name of the backfill's own sessions (lock waiters are counted behind them) */
  applicationName: string;
  timeZone: string;
  /** expected rows per partition, from the dry run on record */
  expectedRows: ReadonlyMap<string, number>;
  env?: NodeJS.ProcessEnv;
  now?: () => Date;
}

export class StopConditions implements StopMonitor {
  /** undefined when the target is not Postgres: lag and lock conditions need a replica then */
  private readonly target: PostgresHealth | undefined;
  private readonly replica: PostgresHealth | undefined;
  private readonly probes: { name: string; sql: string; max: number; health: PostgresHealth }[];
  readonly intervalMs: number;

  constructor(private readonly o: StopConditionsOptions) {
    const stop = o.plan.stop;
    const endpoint = (name: string, field: string): PostgresHealth => {
      const e = postgresEndpoint(o.config, name, field, o.env);
      return new PostgresHealth(e.connection, e.password);
    };
    this.target =
      o.config.connections[o.targetConnection]?.kind === 'postgres' ? endpoint(o.targetConnection, 'target.connection') : undefined;
    this.replica = stop.replica ? endpoint(stop.replica, 'stop.replica') : undefined;
    this.probes = stop.probes.map((p, i) => {
      const health = p.connection ? endpoint(p.connection, `stop.probes[${i}].connection`) : this.target;
      if (!health)
        throw new InputError(`probe "${p.name}" needs a connection: the target is not Postgres`, { field: `stop.probes[${i}].connection` });
      return { ...p, health };
    });
    this.intervalMs = stop.check_interval_ms;
  }

  async before(): Promise<Fired | null> {
    return this.window() ?? (await this.during());
  }

  async during(): Promise<Fired | null> {
    return this.panic() ?? (await this.lag()) ?? (await this.lockWaits()) ?? (await this.probe());
  }

  rowDiff(partitionKey: string, rowsWritten: number): Fired | null {
    const max = this.o.plan.stop.max_row_diff_ratio;
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

  private panic(): Fired | null {
    const file = this.o.plan.stop.panic_file;
    if (!file || !existsSync(file)) return null;
    return { condition: 'panic-file', measured: 'present', threshold: 'absent', reason: `panic file ${file} is present: stopping at once` };
  }

  private window(): Fired | null {
    const w = this.o.plan.stop.no_run_window;
    if (!w) return null;
    const zone = w.timezone ?? this.o.timeZone;
    const hhmm = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(
      (this.o.now ?? (() => new Date()))(),
    );
    const inside = w.from <= w.to ? hhmm >= w.from && hhmm < w.to : hhmm >= w.from || hhmm < w.to;
    if (!inside) return null;
    return {
      condition: 'no-run-window',
      measured: `${hhmm} ${zone}`,
      threshold: `outside ${w.from}–${w.to}`,
      reason: `no-run window: it is ${hhmm} ${zone}, backfills must not run between ${w.from} and ${w.to}`,
    };
  }

  private async lag(): Promise<Fired | null> {
    const max = this.o.plan.stop.max_replication_lag_s;
    if (max === undefined) return null;
    const where = this.replica ? `replica "${this.o.plan.stop.replica}"` : 'pg_stat_replication on the target';
    const source = this.replica ?? this.target;
    if (!source) return null;
    const measure = async (): Promise<number> =>
      this.replica ? (await this.replica.lagOnReplica()).seconds : (await source.lagFromPrimary()).seconds;
    let seconds = await measure();
    if (seconds <= max) return null;
    // **Hazard**: a replica that is a few milliseconds behind after an idle spell reports the
    // age of its last replayed commit, which can be old. Lag that is real persists: measure again.
    await new Promise((resolve) => setTimeout(resolve, 300));
    seconds = await measure();
    if (seconds <= max) return null;
    return {
      condition: 'replication-lag',
      measured: `${seconds.toFixed(1)} s`,
      threshold: `≤ ${max} s`,
      reason: `replication lag: ${seconds.toFixed(1)} s on ${where} > ${max} s`,
    };
  }

  private async lockWaits(): Promise<Fired | null> {
    const max = this.o.plan.stop.max_lock_wait_ms;
    if (max === undefined || !this.target) return null;
    const { sessions, maxWaitMs } = await this.target.waitersBehind(this.o.applicationName);
    if (sessions === 0 || maxWaitMs <= max) return null;
    return {
      condition: 'lock-wait',
      measured: `${Math.round(maxWaitMs)} ms`,
      threshold: `≤ ${max} ms`,
      reason: `lock wait: ${sessions} session(s) waiting behind the backfill's locks, the longest ${Math.round(maxWaitMs)} ms > ${max} ms`,
    };
  }

  private async probe(): Promise<Fired | null> {
    for (const p of this.probes) {
      const value = await p.health.scalar(p.sql);
      if (value !== null && value > p.max) {
        return { condition: 'probe', measured: String(value), threshold: `≤ ${p.max}`, reason: `probe "${p.name}": ${value} > ${p.max}` };
      }
    }
    return null;
  }

  async close(): Promise<void> {
    await Promise.all([this.target?.close(), this.replica?.close(), ...this.probes.map((p) => p.health.close())]);
  }
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
