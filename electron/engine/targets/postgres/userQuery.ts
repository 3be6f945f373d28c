/**
 * Running SQL a user wrote (a job's source query and validation rules, quality rules, stop
 * probes, closed-partition probes): the one way such text reaches PostgreSQL. Three guards,
 * each enough alone against a text that tries to write (README "What is guaranteed"):
 *
 *   1. its parse tree must be one read-only SELECT (engine/sql/readOnlySelect.ts);
 *   2. it is sent with the extended protocol (connect.ts query()), in which the server runs
 *      exactly one statement: `…; COMMIT; DELETE …` is a syntax error, never three statements;
 *   3. it runs inside a READ ONLY transaction (readOnlyTransaction), or — for the target side of
 *      a validation rule, which must see the uncommitted partition — inside a READ ONLY
 *      savepoint of the write transaction (readOnlySavepoint), so a function that writes fails.
 *
 * Every session also carries the connection's statement_timeout (openPg).
 */
import { InputError } from '../../../../shared/errors.ts';
import { checkReadOnlySelect, type SqlOrigin } from '../../sql/readOnlySelect.ts';
import { query, type PgClient, type QueryOutcome } from './connect.ts';
import { describePgError } from './errors.ts';

export type { SqlOrigin };

/**
 * SQLSTATE classes that mean the text itself is wrong — syntax, a missing table or column, a
 * type or data error, a write refused by the read-only transaction, a missing privilege: the
 * user fixes the job (exit 2), retrying cannot help.
 */
function isUsersFault(code: string | undefined): boolean {
  if (code === undefined) return false;
  return /^(42|22|21|0A|2F|38|39|25006|44)/.test(code) || code === '25006';
}

/** A server error caused by a user's SQL, as an InputError naming the field, with the server's words. */
export function userSqlError(err: unknown, origin: SqlOrigin, sql: string): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !isUsersFault(code)) return err;
  const where = origin.where ? `${origin.where}: ` : '';
  const hint =
    code === '25006'
      ? 'the SQL tried to write, and user SQL only ever runs read-only: make it a plain SELECT'
      : code === '42501'
        ? "grant the connection's role what the SQL reads, or change the SQL"
        : 'fix the SQL in the job, plan or config file';
  return new InputError(`${where}${origin.field}: the server refused the SQL: ${describePgError(err)}`, {
    field: origin.field,
    value: sql,
    hint,
  });
}

/**
 * Runs a user's SQL on `client` after the parse check. The caller has put the session in a read-only
 * transaction or savepoint (readOnlyTransaction / readOnlySavepoint); values are bound, never spliced.
 */
export async function userQuery<T = Record<string, unknown>>(
  client: PgClient,
  sql: string,
  params: Readonly<Record<string, unknown>>,
  origin: SqlOrigin,
): Promise<QueryOutcome<T>> {
  await checkReadOnlySelect(sql, { ...origin, params: origin.params ?? Object.keys(params) });
  try {
    return await query<T>(client, sql, params);
  } catch (err) {
    throw userSqlError(err, origin, sql);
  }
}

/** The first row of a user's SQL (a rule's measures, a probe's number); {} when it returned none. */
export async function userFirstRow(
  client: PgClient,
  sql: string,
  params: Readonly<Record<string, unknown>>,
  origin: SqlOrigin,
): Promise<Record<string, unknown>> {
  return (await userQuery<Record<string, unknown>>(client, sql, params, origin)).rows[0] ?? {};
}

/** The first column of the first row of a user's SQL as a number; null for no row or NULL. */
export async function userScalar(
  client: PgClient,
  sql: string,
  params: Readonly<Record<string, unknown>>,
  origin: SqlOrigin,
): Promise<number | null> {
  const value = Object.values(await userFirstRow(client, sql, params, origin))[0];
  if (value === null || value === undefined) return null;
  const n = Number(value);
  if (!Number.isFinite(n)) {
    const where = origin.where ? `${origin.where}: ` : '';
    throw new InputError(`${where}${origin.field}: the SQL must return one number, got ${JSON.stringify(value)}`, {
      field: origin.field,
      value: sql,
    });
  }
  return n;
}

/**
 * `fn` in a transaction of its own that is READ ONLY (REPEATABLE READ: one snapshot for all its
 * statements) and always rolled back. The session must not be in a transaction already.
 */
export async function readOnlyTransaction<T>(client: PgClient, fn: (client: PgClient) => Promise<T>): Promise<T> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  let result: T;
  try {
    result = await fn(client);
  } catch (err) {
    // The failure of `fn` is the one to report; a ROLLBACK that fails too leaves the session
    // inside its transaction, and the pool destroys it (ClientPool.release).
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
  await client.query('ROLLBACK');
  return result;
}

/**
 * `fn` inside the transaction already open on `client` (the write), unable to modify anything:
 *
 *   SAVEPOINT bf_read; SET TRANSACTION READ ONLY; …fn…; ROLLBACK TO SAVEPOINT bf_read; RELEASE SAVEPOINT bf_read
 *
 * Why it holds (checked against the server in test/integration/user-sql-guard.test.ts):
 * PostgreSQL lets a transaction become read-only at any point (only the way back is refused:
 * "cannot set transaction read-write mode inside a read-only transaction" in a subtransaction),
 * so every write `fn` attempts — DML, a function that writes, nextval — fails with 25006. The
 * setting is a GUC scoped to the savepoint: ROLLBACK TO SAVEPOINT restores read-write for the
 * executor's own marker row and COMMIT, and also undoes anything else `fn` changed in the
 * subtransaction. `fn` still sees the uncommitted partition, which is what a target-side rule
 * must check.
 */
export async function readOnlySavepoint<T>(client: PgClient, fn: (client: PgClient) => Promise<T>): Promise<T> {
  // Our own two statements in one round trip (the simple protocol runs both, in order).
  await client.query('SAVEPOINT bf_read; SET TRANSACTION READ ONLY');
  let result: T;
  try {
    result = await fn(client);
  } catch (err) {
    // The write fails with it; its transaction is rolled back by the caller.
    await client.query('ROLLBACK TO SAVEPOINT bf_read').catch(() => undefined);
    throw err;
  }
  await client.query('ROLLBACK TO SAVEPOINT bf_read; RELEASE SAVEPOINT bf_read');
  return result;
}

/**
 * A job's source query runs inside the write transaction (the INSERT … SELECT the executor
 * composes), where no READ ONLY can guard it. The parse check keeps out every statement that
 * writes and the built-in functions that act outside the transaction; what remains are
 * functions defined on the server itself. Any of those the query calls that is declared
 * VOLATILE — the only kind PostgreSQL lets write — is refused here (exit 2): declare it STABLE
 * or IMMUTABLE if it only reads. The same rule holds for every SQL text of a job (rules,
 * quality checks), which also run read-only: one rule, said once, refused before a run starts.
 */
export async function refuseVolatileFunctions(client: PgClient, functions: readonly string[], origin: SqlOrigin): Promise<void> {
  const names = [...new Set(functions.map((f) => f.split('.').pop() ?? f))];
  if (names.length === 0) return;
  const r = await query<{ name: string }>(
    client,
    `SELECT DISTINCT n.nspname || '.' || p.proname AS name
       FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
      WHERE p.proname = ANY(:names::text[]) AND p.provolatile = 'v'
        AND n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
    { names },
  );
  if (r.rows.length === 0) return;
  const list = r.rows.map((row) => row.name).join(', ');
  const where = origin.where ? `${origin.where}: ` : '';
  throw new InputError(
    `${where}${origin.field}: the SQL calls ${list}, declared VOLATILE on the server: it could write from inside the backfill's write transaction`,
    {
      field: origin.field,
      value: list,
      hint: 'declare the function STABLE (or IMMUTABLE) if it only reads, or compute its result in the SELECT itself',
    },
  );
}
