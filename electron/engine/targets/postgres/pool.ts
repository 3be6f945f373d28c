import type { PostgresConnection } from '../../../../shared/schemas.ts';
import type { PgClient } from './connect.ts';
import { openPg, query } from './connect.ts';
import { classifyPgError } from './errors.ts';
import { readOnlyTransaction } from './userQuery.ts';

/**
 * A few connections to one server, opened on demand and kept for the next partition.
 * A client that saw a connection error is destroyed, never handed out again.
 */
export class ClientPool {
  private readonly idle: PgClient[] = [];
  private readonly all = new Set<PgClient>();
  private closed = false;

  constructor(
    private readonly connection: PostgresConnection,
    private readonly password: string | undefined,
    private readonly timeZone: string,
    private readonly applicationName: string,
  ) {}

  async acquire(): Promise<PgClient> {
    if (this.closed) throw new Error('the connection pool is closed');
    const ready = this.idle.pop();
    if (ready) return ready;
    const client = await openPg({
      url: this.connection.url,
      password: this.password,
      statementTimeoutMs: this.connection.statement_timeout_ms,
      lockTimeoutMs: this.connection.lock_timeout_ms,
      connectTimeoutMs: this.connection.connect_timeout_ms,
      applicationName: this.applicationName,
    });
    // The job's time zone decides what cast(ts as date) means in its SQL; both sides agree.
    await query(client, `SELECT set_config('TimeZone', :tz, false), set_config('DateStyle', 'ISO, YMD', false)`, { tz: this.timeZone });
    // A dead socket must not crash the process; the next query on this client fails instead.
    client.on('error', () => undefined);
    if (this.closed) {
      // **Hazard**: closeAll() ran while this one was connecting (a late cancel, say). An open
      // client nobody tracks keeps the process alive forever.
      await client.end().catch(() => undefined);
      throw new Error('the connection pool is closed');
    }
    this.all.add(client);
    return client;
  }

  /**
   * `fn` on a session of this pool: the one way the engine borrows a session for a read or a
   * step of its own (STYLE 15). A session that saw a connection error, or that `fn` left inside
   * a transaction, is destroyed rather than handed out again.
   */
  async use<T>(fn: (client: PgClient) => Promise<T>): Promise<T> {
    const client = await this.acquire();
    let broken = false;
    try {
      return await fn(client);
    } catch (err) {
      broken = classifyPgError(err) === 'transient';
      throw err;
    } finally {
      this.release(client, broken);
    }
  }

  /** `fn` in a READ ONLY transaction of its own (see readOnlyTransaction), on a session of this pool. */
  read<T>(fn: (client: PgClient) => Promise<T>): Promise<T> {
    return this.use((client) => readOnlyTransaction(client, fn));
  }

  release(client: PgClient, broken = false): void {
    // A session handed back after closeAll() (by side work that ended late, say) must not
    // wait in an idle list nobody reads any more. **Hazard**: nor one still inside a transaction
    // (its ROLLBACK failed, or a caller forgot it): the next borrower would run in it.
    const idle = (client as PgClient & { getTransactionStatus?: () => string | null }).getTransactionStatus?.() ?? 'I';
    if (broken || this.closed || idle !== 'I') {
      this.all.delete(client);
      void client.end().catch(() => undefined);
      return;
    }
    this.idle.push(client);
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    const clients = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}
