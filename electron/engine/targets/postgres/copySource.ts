/**
 * COPY (query) TO STDOUT cannot take bind parameters. To stream a parameterised source query
 * between servers without splicing values into SQL, each `:name` becomes
 * `current_setting('backfill_runbook.p_name')::<type>`, and the values are set per partition with
 * `set_config(…, $1, true)` — bound, transaction-local. The types come from the server itself:
 * the query is PREPAREd once and pg_prepared_statements tells each parameter's type. This works
 * on a read-only replica too (no temp tables).
 */
import { bindNamed } from './sql.ts';
import type { PgClient } from './connect.ts';
import { query } from './connect.ts';
import { sourceAsTable } from './statements.ts';

export interface CopySource {
  /** `COPY (SELECT cols FROM (source) src) TO STDOUT` with settings in place of parameters. */
  copySql: string;
  /** The parameter names the query uses, each set before COPY. */
  names: string[];
}

const PARAMS = ['partition_start', 'partition_end', 'run_id'] as const;

export async function prepareCopySource(client: PgClient, sourceQuery: string, selectList: string): Promise<CopySource> {
  const select = `SELECT ${selectList} FROM ${sourceAsTable(sourceQuery)}`;
  const placeholders = new Map<number, string>();
  const bound = bindNamed(select, Object.fromEntries(PARAMS.map((p) => [p, p])), {
    placeholder: (index, name) => {
      placeholders.set(index, name);
      return `$${index}`;
    },
  });
  const statement = `bf_probe_${process.pid}_${Date.now()}`;
  await client.query(`PREPARE ${statement} AS ${bound.text}`);
  let types: string[];
  try {
    const r = await query<{ types: string[] }>(client, `SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = :name`, {
      name: statement,
    });
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
  return { copySql: `COPY (${rewritten.text}) TO STDOUT`, names: [...new Set(names)] };
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
