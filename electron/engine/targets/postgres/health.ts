/**
 * What the stop conditions measure on Postgres while a backfill runs: replication lag (on the
 * primary from pg_stat_replication, or on a replica itself), sessions waiting on locks held
 * by the backfill, VACUUM in progress on the target table, and SQL probes. Each measurement
 * opens and reuses one small session.
 */
import type { PostgresConnection } from '../../../../shared/schemas.ts';
import type { PgClient } from './connect.ts';
import { openPg, query } from './connect.ts';
import { parseQualifiedName, quoteQualified } from './sql.ts';
import { readOnlyTransaction, userScalar, type SqlOrigin } from './userQuery.ts';

export class PostgresHealth {
  private client: Promise<PgClient> | undefined;
  private queue: Promise<unknown> = Promise.resolve();

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

  /**
   * One measurement on the session. **Hazard**: a session that failed (a refused connection, a
   * timeout, a ROLLBACK that could not be sent) is dropped, or every later measurement would
   * fail on it after the server has recovered.
   */
  private use<T>(fn: (client: PgClient) => Promise<T>): Promise<T> {
    // One at a time: signals measured together share this session, and a probe's transaction
    // must not take in another signal's query (nor fail it, should the probe's SQL fail).
    const turn = this.queue.then(() => this.measure(fn));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async measure<T>(fn: (client: PgClient) => Promise<T>): Promise<T> {
    const pending = this.session();
    try {
      return await fn(await pending);
    } catch (err) {
      if (this.client === pending) {
        this.client = undefined;
        void pending.then((c) => c.end()).catch(() => undefined);
      }
      throw err;
    }
  }

  /** Seconds the slowest replica is behind, from the primary's view (0 without replicas). */
  async lagFromPrimary(): Promise<{ seconds: number; replicas: number }> {
    const r = await this.use((c) =>
      query<{ lag: string; replicas: string }>(
        c,
        `SELECT coalesce(max(extract(epoch FROM replay_lag)), 0)::text AS lag, count(*)::text AS replicas FROM pg_stat_replication`,
        {},
      ),
    );
    return { seconds: Number(r.rows[0]?.lag ?? 0), replicas: Number(r.rows[0]?.replicas ?? 0) };
  }

  /**
   * Seconds a replica is behind: 0 when it has replayed all it received, else the age of the
   * last transaction it replayed. Paused replay with new WAL arriving shows as growing lag.
   */
  async lagOnReplica(): Promise<{ seconds: number; inRecovery: boolean }> {
    const r = await this.use((c) =>
      query<{ lag: string | null; recovery: boolean }>(
        c,
        `SELECT pg_is_in_recovery() AS recovery,
              CASE WHEN NOT pg_is_in_recovery() THEN NULL
                   WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
                   -- behind, and nothing replayed since start: at least as old as the server's uptime
                   ELSE extract(epoch FROM now() - coalesce(pg_last_xact_replay_timestamp(), pg_postmaster_start_time())) END::text AS lag`,
        {},
      ),
    );
    return { seconds: Number(r.rows[0]?.lag ?? 0), inRecovery: Boolean(r.rows[0]?.recovery) };
  }

  /** Sessions waiting for a lock that a backend of this backfill (by application_name) holds. */
  async waitersBehind(applicationName: string): Promise<{ sessions: number; maxWaitMs: number }> {
    const r = await this.use((c) =>
      query<{ sessions: string; wait: string }>(
        c,
        `SELECT count(*)::text AS sessions, coalesce(max(extract(epoch FROM now() - w.state_change) * 1000), 0)::text AS wait
         FROM pg_stat_activity w
        WHERE w.wait_event_type = 'Lock'
          AND pg_blocking_pids(w.pid) && ARRAY(SELECT pid FROM pg_stat_activity WHERE application_name = :app)`,
        { app: applicationName },
      ),
    );
    return { sessions: Number(r.rows[0]?.sessions ?? 0), maxWaitMs: Number(r.rows[0]?.wait ?? 0) };
  }

  /**
   * VACUUM running on `table` (or one of its partitions) now, autovacuum or manual, from
   * pg_stat_progress_vacuum. The name is parsed as PostgreSQL would and bound, never spliced.
   */
  async vacuumOn(table: string, field: string): Promise<{ running: number; autovacuum: boolean }> {
    const name = quoteQualified(parseQualifiedName(table, field).slice(-2), field);
    const r = await this.use((c) =>
      query<{ running: string; auto: boolean }>(
        c,
        `SELECT count(*)::text AS running, coalesce(bool_or(a.backend_type = 'autovacuum worker'), false) AS auto
         FROM pg_stat_progress_vacuum v LEFT JOIN pg_stat_activity a ON a.pid = v.pid
        WHERE v.relid = to_regclass(:table)
              -- a partitioned table: VACUUM runs on its partitions (pg_partition_tree is empty for a plain table)
              OR v.relid IN (SELECT relid FROM pg_partition_tree(to_regclass(:table)))`,
        { table: name },
      ),
    );
    return { running: Number(r.rows[0]?.running ?? 0), autovacuum: Boolean(r.rows[0]?.auto) };
  }

  /**
   * A probe's SQL: user text, so it runs as every user SQL does (one read-only SELECT, checked by
   * PostgreSQL's parser, in a READ ONLY transaction that is rolled back).
   */
  async scalar(sql: string, origin: SqlOrigin): Promise<number | null> {
    return this.use((client) => readOnlyTransaction(client, (c) => userScalar(c, sql, {}, { ...origin, params: origin.params ?? [] })));
  }

  async close(): Promise<void> {
    const pending = this.client;
    this.client = undefined;
    if (pending) await pending.then((c) => c.end()).catch(() => undefined);
  }
}
