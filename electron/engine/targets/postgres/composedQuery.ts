/**
 * A statement the engine composed around a job's SQL (the change by key's join), run the way
 * userQuery runs a user's text — parse-checked as one read-only SELECT, sent over the extended
 * protocol, inside the caller's READ ONLY transaction, server errors named by the job's field —
 * except that the parse check of each composed text is made once per process rather than once
 * per partition: the text is the same for every partition (values are bound, never spliced),
 * and parsing it costs as much as a small partition's query.
 */
import { checkReadOnlySelect, type SqlOrigin } from '../../sql/readOnlySelect.ts';
import { query, type PgClient, type QueryOutcome } from './connect.ts';
import { userSqlError } from './userQuery.ts';

const checked = new Map<string, Promise<unknown>>();
/** Composed texts remembered as checked; beyond it the oldest is forgotten (and checked again if it comes back). */
const REMEMBERED = 256;

export async function composedQuery<T = Record<string, unknown>>(
  client: PgClient,
  sql: string,
  params: Readonly<Record<string, unknown>>,
  origin: SqlOrigin,
): Promise<QueryOutcome<T>> {
  const names = Object.keys(params).sort();
  const id = `${names.join(',')}\u0000${sql}`;
  let check = checked.get(id);
  if (check === undefined) {
    check = checkReadOnlySelect(sql, { ...origin, params: origin.params ?? names });
    checked.set(id, check);
    if (checked.size > REMEMBERED) checked.delete(checked.keys().next().value as string);
    // A refusal is not remembered: the next call checks (and refuses) again.
    check.catch(() => checked.delete(id));
  }
  await check;
  try {
    return await query<T>(client, sql, params);
  } catch (err) {
    throw userSqlError(err, origin, sql);
  }
}
