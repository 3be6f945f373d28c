/**
 * COPY (query) TO STDOUT cannot take bind parameters. To stream a parameterised source query
 * between servers without splicing values into SQL, each `:name` becomes
 * `current_setting('backfill_runbook.p_name')::<type>`, and the values are set per partition with
 * `set_config(…, $1, true)` — bound, transaction-local. The types come from the server itself:
 * the query is PREPAREd once and pg_prepared_statements tells each parameter's type. This works
 * on a read-only replica too (no temp tables).
 */
import { parsePg } from '../../sql/pgParse.ts';
import { bindNamed } from './sql.ts';
import type { PgClient } from './connect.ts';
import { query, queryText } from './connect.ts';
import { sourceAsTable } from './statements.ts';

export interface CopySource {
  /** `COPY (SELECT cols FROM (source) src) TO STDOUT` with settings in place of parameters. */
  copySql: string;
  /** Both ends in binary (see binaryCopyFits): the target's COPY must say so too. */
  binary: boolean;
  /** The parameter names the query uses, each set before COPY. */
  names: string[];
}

const PARAMS = ['partition_start', 'partition_end', 'run_id'] as const;

/**
 * In the caller's READ ONLY transaction. The source query has passed the user-SQL guard
 * (checkReadOnlySelect) before it gets here.
 */
export async function prepareCopySource(client: PgClient, sourceQuery: string, selectList: string, binary = false): Promise<CopySource> {
  const select = `SELECT ${selectList} FROM ${sourceAsTable(sourceQuery)}`;
  const placeholders = new Map<number, string>();
  const bound = bindNamed(select, Object.fromEntries(PARAMS.map((p) => [p, p])), {
    placeholder: (index, name) => {
      placeholders.set(index, name);
      return `$${index}`;
    },
  });
  const statement = `bf_probe_${process.pid}_${Date.now()}`;
  // Extended protocol, as every text holding a user's SQL: one statement, whatever the text says.
  await queryText(client, `PREPARE ${statement} AS ${bound.text}`);
  let types: string[];
  try {
    const r = await query<{ types: string[] }>(
      client,
      `SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = :name`,
      {
        name: statement,
      },
    );
    types = r.rows[0]?.types ?? [];
  } finally {
    await client.query(`DEALLOCATE ${statement}`);
  }
  const names: string[] = [];
  const rewritten = bindNamed(select, Object.fromEntries(PARAMS.map((p) => [p, p])), {
    placeholder: (index, name) => {
      names.push(name);
      // The type name comes from pg_catalog, never from the user.
      return `(current_setting('backfill_runbook.p_${name}')::${types[index - 1] ?? 'text'})`;
    },
  });
  const copySql = `COPY (${rewritten.text}) TO STDOUT${binary ? ' (FORMAT binary)' : ''}`;
  await assertOneCopy(copySql);
  return { copySql, binary, names: [...new Set(names)] };
}

/**
 * **Important**: COPY … TO STDOUT goes over the simple protocol (pg-copy-streams), which would
 * run every statement a text holds. The source query inside it passed the guard on its own;
 * this makes sure the composed text is still exactly one COPY of a query to STDOUT.
 */
async function assertOneCopy(copySql: string): Promise<void> {
  const tree = await parsePg(copySql, []);
  const stmts = tree.stmts ?? [];
  const copy = (stmts[0]?.stmt as { CopyStmt?: { is_from?: boolean; filename?: string; is_program?: boolean } } | undefined)?.CopyStmt;
  if (stmts.length !== 1 || !copy || copy.is_from || copy.filename || copy.is_program) {
    throw new Error(`the composed COPY of the source query is not one COPY … TO STDOUT (${stmts.length} statements): refused`);
  }
}

/** FirstNormalObjectId: OIDs below it were assigned by initdb and name the same type on every server. */
const FIRST_NORMAL_OID = 16384;

/**
 * Binary COPY carries each value in its type's own wire form — no formatting to text on the
 * source and no parsing on the target, so it is faster and exact (no time zone, DateStyle or
 * lc_monetary in between). Used only where it means the same thing at both ends: every column
 * the source query returns has exactly the target column's type, a built-in one, and both
 * servers run the same major version (binary forms may change between versions). Otherwise text.
 */
export async function binaryCopyFits(
  source: PgClient,
  target: PgClient,
  tableQuoted: string,
  fields: readonly { name: string; dataTypeID: number }[],
): Promise<boolean> {
  if (fields.length === 0 || fields.some((f) => f.dataTypeID >= FIRST_NORMAL_OID)) return false;
  const columns = await query<{ name: string; oid: string }>(
    target,
    `SELECT attname::text AS name, atttypid::text AS oid FROM pg_catalog.pg_attribute WHERE attrelid = :table::regclass AND attnum > 0 AND NOT attisdropped`,
    { table: tableQuoted },
  );
  const types = new Map(columns.rows.map((c) => [c.name, Number(c.oid)]));
  if (fields.some((f) => types.get(f.name) !== f.dataTypeID)) return false;
  const major = async (c: PgClient): Promise<number | undefined> =>
    (await query<{ v: number }>(c, `SELECT current_setting('server_version_num')::int / 10000 AS v`)).rows[0]?.v;
  const [s, t] = await Promise.all([major(source), major(target)]);
  return s !== undefined && s === t;
}

/** Sets the partition's parameters for the COPY that follows, in the current transaction. */
export async function setCopyParameters(client: PgClient, source: CopySource, values: Record<string, string>): Promise<void> {
  if (source.names.length === 0) return;
  // One round trip for all of them.
  const calls = source.names.map((_, i) => `set_config(:setting${i}, :value${i}, true)`).join(', ');
  const params: Record<string, string> = {};
  source.names.forEach((name, i) => {
    params[`setting${i}`] = `backfill_runbook.p_${name}`;
    params[`value${i}`] = values[name] ?? '';
  });
  await query(client, `SELECT ${calls}`, params);
}
