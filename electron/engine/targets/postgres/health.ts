/**
 * What the stop conditions measure on Postgres while a backfill runs: replication lag (on the
 * primary from pg_stat_replication, or on a replica itself), sessions waiting on locks held
 * by the backfill, and custom probes. Each measurement opens and reuses one small session.
 */
import type { PostgresConnection } from '../../../../shared/schemas.ts';
import type { PgClient } from './connect.ts';
import { openPg, query } from './connect.ts';

export class PostgresHealth {
  private client: Promise<PgClient> | undefined;

  constructor(
    private readonly connection: PostgresConnection,
    private readonly password: string | undefined,
  ) {}

  private session(): Promise<PgClient> {
    this.client ??= openPg({
      url: this.connection.url,
      password: this.password,
      statementTimeoutMs: 5_000,
      lockTimeoutMs: 1_000,
      connectTimeoutMs: this.connection.connect_timeout_ms,
      applicationName: 'backfill-runbook:monitor',
    }).then((c) => {
      c.on('error', () => (this.client = undefined));
      return c;
    });
    return this.client;
  }

  /** Seconds the slowest replica is behind, from the primary's view (0 without replicas). */
  async lagFromPrimary(): Promise<{ seconds: number; replicas: number }> {
    const r = await query<{ lag: string; replicas: string }>(
      await this.session(),
      `SELECT coalesce(max(extract(epoch FROM replay_lag)), 0)::text AS lag, count(*)::text AS replicas FROM pg_stat_replication`,
      {},
    );
    return { seconds: Number(r.rows[0]?.lag ?? 0), replicas: Number(r.rows[0]?.replicas ?? 0) };
  }

  /**
   * Seconds a replica is behind: 0 when it has replayed all it received, else the age of the
   * last transaction it replayed. Paused replay with new WAL arriving shows as growing lag.
   */
  async lagOnReplica(): Promise<{ seconds: number; inRecovery: boolean }> {
    const r = await query<{ lag: string | null; recovery: boolean }>(
      await this.session(),
      `SELECT pg_is_in_recovery() AS recovery,
              CASE WHEN NOT pg_is_in_recovery() THEN NULL
                   WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
                   -- behind, and nothing replayed since start: at least as old as the server's uptime
                   ELSE extract(epoch FROM now() - coalesce(pg_last_xact_replay_timestamp(), pg_postmaster_start_time())) END::text AS lag`,
      {},
    );
    return { seconds: Number(r.rows[0]?.lag ?? 0), inRecovery: Boolean(r.rows[0]?.recovery) };
  }

  /** Sessions waiting for a lock that a backend of this backfill (by application_name) holds. */
  async waitersBehind(applicationName: string): Promise<{ sessions: number; maxWaitMs: number }> {
    const r = await query<{ sessions: string; wait: string }>(
      await this.session(),
      `SELECT count(*)::text AS sessions, coalesce(max(extract(epoch FROM now() - w.state_change) * 1000), 0)::text AS wait
         FROM pg_stat_activity w
        WHERE w.wait_event_type = 'Lock'
          AND pg_blocking_pids(w.pid) && ARRAY(SELECT pid FROM pg_stat_activity WHERE application_name = :app)`,
      { app: applicationName },
    );
    return { sessions: Number(r.rows[0]?.sessions ?? 0), maxWaitMs: Number(r.rows[0]?.wait ?? 0) };
  }

  async scalar(sql: string): Promise<number | null> {
    const r = await query<Record<string, unknown>>(await this.session(), sql, {});
    const value = Object.values(r.rows[0] ?? {})[0];
    return value === null || value === undefined ? null : Number(value);
  }

  async close(): Promise<void> {
    const pending = this.client;
    this.client = undefined;
    if (pending) await pending.then((c) => c.end()).catch(() => undefined);
  }
}
