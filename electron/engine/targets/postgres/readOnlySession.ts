/**
 * One short READ ONLY session on a connection for the dry run's side questions (the catalog's
 * impact, closed-partition probes): opened, used in one rolled-back read-only transaction,
 * closed — whatever `fn` does, nothing is written and no session is left open.
 */
import { ClientPool } from './pool.ts';
import type { PgClient } from './connect.ts';
import type { PostgresEndpoint } from './partitionTarget.ts';

export async function withReadOnlySession<T>(
  endpoint: PostgresEndpoint,
  timeZone: string,
  applicationName: string,
  fn: (client: PgClient) => Promise<T>,
): Promise<T> {
  const pool = new ClientPool(endpoint.connection, endpoint.password, timeZone, applicationName);
  try {
    return await pool.read(fn);
  } finally {
    await pool.closeAll();
  }
}
