/**
 * The signals a run watches, built once from its plan: replication lag (a replica's own view, or
 * pg_stat_replication on the target), sessions waiting behind the backfill's locks, and the
 * plan's probes (SQL, Prometheus, an HTTP JSON endpoint, VACUUM on the target table). Their
 * levels are read from the plan as it stands at each measurement, so `tune` applies at once.
 */
import { InputError } from '../../../shared/errors.ts';
import { probeName, type Config, type Plan, type Probe, type StopSettings } from '../../../shared/schemas.ts';
import { postgresEndpoint } from '../runbook/prepare.ts';
import { PostgresHealth } from '../targets/postgres/health.ts';
import { measureHttpProbe, probeHeaders } from './probes/httpProbe.ts';

export type SignalCondition = 'replication-lag' | 'lock-wait' | 'probe';

export interface WatchedSignal {
  id: string;
  label: string;
  unit: string;
  condition: SignalCondition;
  /** the levels now; none set: the signal is not watched at the moment */
  levels(stop: StopSettings): { max?: number; critical?: number };
  /** one measurement; throws when it cannot measure */
  measure(): Promise<number>;
  /** measure again before believing a reading over a level */
  confirm?: boolean;
  /** a probe's SQL, checked as user SQL before the run starts */
  sql?: { text: string; field: string };
}

export interface SignalSourceOptions {
  plan: Plan;
  config: Config;
  targetConnection: string;
  /** the target table as the job names it (VACUUM probes watch it) */
  targetTable?: string;
  /** application_name of the backfill's own sessions (lock waiters are counted behind them) */
  applicationName: string;
  env?: NodeJS.ProcessEnv;
}

/** The signals and the Postgres sessions they measure on (closed with the run). */
export function signalSources(o: SignalSourceOptions): { signals: WatchedSignal[]; sessions: PostgresHealth[] } {
  const stop = o.plan.stop;
  const sessions: PostgresHealth[] = [];
  const endpoint = (name: string, field: string): PostgresHealth => {
    const e = postgresEndpoint(o.config, name, field, o.env);
    const health = new PostgresHealth(e.connection, e.password);
    sessions.push(health);
    return health;
  };
  const target =
    o.config.connections[o.targetConnection]?.kind === 'postgres' ? endpoint(o.targetConnection, 'target.connection') : undefined;
  const signals: WatchedSignal[] = [];

  const replica = stop.replica ? endpoint(stop.replica, 'stop.replica') : undefined;
  if (replica || target) {
    signals.push({
      id: 'replication-lag',
      label: replica ? `replication lag on replica "${stop.replica}"` : 'replication lag (pg_stat_replication on the target)',
      unit: 's',
      condition: 'replication-lag',
      levels: (s) => ({ max: s.max_replication_lag_s, critical: s.critical_replication_lag_s }),
      measure: async () => (replica ? (await replica.lagOnReplica()).seconds : ((await target?.lagFromPrimary())?.seconds ?? 0)),
      // **Hazard**: a replica a few milliseconds behind after an idle spell reports the age of its
      // last replayed commit, which can be old. Lag that is real persists: measure again.
      confirm: true,
    });
  }
  if (target) {
    signals.push({
      id: 'lock-wait',
      label: "lock wait behind the backfill's locks",
      unit: 'ms',
      condition: 'lock-wait',
      levels: (s) => ({ max: s.max_lock_wait_ms, critical: s.critical_lock_wait_ms }),
      measure: async () => {
        const { sessions: waiting, maxWaitMs } = await target.waitersBehind(o.applicationName);
        return waiting === 0 ? 0 : Math.round(maxWaitMs);
      },
    });
  }
  stop.probes.forEach((p, i) => signals.push(probeSignal(p, i, { ...o, target, endpoint })));
  return { signals, sessions };
}

function probeSignal(
  p: Probe,
  i: number,
  o: SignalSourceOptions & { target: PostgresHealth | undefined; endpoint: (name: string, field: string) => PostgresHealth },
): WatchedSignal {
  const field = `stop.probes[${i}]`;
  const name = probeName(p);
  const levels = () => ({ max: p.max ?? (p.kind === 'autovacuum' ? 0 : undefined), critical: p.critical });
  const postgres = (connection: string | undefined): PostgresHealth => {
    const health = connection ? o.endpoint(connection, `${field}.connection`) : o.target;
    if (!health) throw new InputError(`probe "${name}" needs a connection: the target is not Postgres`, { field: `${field}.connection` });
    return health;
  };
  switch (p.kind) {
    case undefined:
    case 'sql': {
      const health = postgres(p.connection);
      const origin = { field: `${field}.sql`, where: `plan "${o.plan.request_id}"` };
      return {
        id: `probe:${name}`,
        label: `probe "${name}"`,
        unit: '',
        condition: 'probe',
        levels,
        sql: { text: p.sql, field: origin.field },
        measure: async () => {
          const value = await health.scalar(p.sql, origin);
          if (value === null) throw new Error('the SQL returned no row or NULL');
          return value;
        },
      };
    }
    case 'prometheus':
    case 'http': {
      // Read now: a token that is not set is a configuration error before the run starts.
      const headers = probeHeaders(p, field, o.env ?? process.env);
      return {
        id: `probe:${name}`,
        label: `probe "${name}" (${p.kind === 'prometheus' ? 'Prometheus' : 'HTTP'})`,
        unit: '',
        condition: 'probe',
        levels,
        measure: () => measureHttpProbe(p, headers),
      };
    }
    case 'autovacuum': {
      const table = o.targetTable;
      if (!table) throw new InputError(`probe "${name}" watches VACUUM on the target table: the target is not Postgres`, { field });
      const health = postgres(p.connection);
      return {
        id: `probe:${name}`,
        label: `VACUUMs running on ${table}`,
        unit: '',
        condition: 'probe',
        levels,
        measure: async () => (await health.vacuumOn(table, 'target.table')).running,
      };
    }
  }
}
