// Resolving user-written table and column names against pg_catalog. Names are looked up with
// bound parameters and come back quoted part by part, so no user text is ever spliced into SQL.
import { InputError, showValue } from '../../../../shared/errors.ts';
import type { PgClient, QueryField } from './connect.ts';
import { editDistance, parseQualifiedName, quoteQualified } from './sql.ts';

export interface ColumnInfo {
  name: string;
  /** format_type(), e.g. `numeric(12,2)`, `timestamp with time zone`. */
  type: string;
  notNull: boolean;
  /** pg_type.typcategory = 'N' (integers, numeric, floats, money): can be summed. */
  numeric: boolean;
}

export type TableKind = 'table' | 'partitioned table' | 'view' | 'materialized view' | 'foreign table';

export interface TableInfo {
  schema: string;
  name: string;
  /** `"schema"."name"`, ready for SQL text. */
  quoted: string;
  kind: TableKind;
  columns: ColumnInfo[];
  /** Column sets of the primary key and of unique indexes usable as ON CONFLICT arbiters. */
  uniqueKeys: string[][];
}

const KINDS: Readonly<Record<string, TableKind>> = {
  r: 'table',
  p: 'partitioned table',
  v: 'view',
  m: 'materialized view',
  f: 'foreign table',
};
const OTHER_KINDS: Readonly<Record<string, string>> = {
  i: 'an index',
  I: 'an index',
  S: 'a sequence',
  c: 'a composite type',
  t: 'a TOAST table',
};

/** `mart.orders` stays bare; `"Odd Schema"."t"` is quoted where PostgreSQL would need it. */
export function displayName(parts: readonly string[]): string {
  return parts.map((p) => (/^[a-z_][a-z0-9_$]*$/.test(p) ? p : quoteQualified([p]))).join('.');
}

export async function resolveTable(client: PgClient, qualifiedName: string, field: string): Promise<TableInfo> {
  const parts = parseQualifiedName(qualifiedName, field);
  const env = await client.query<{ db: string; schemas: string[] }>(
    'select current_database() as db, current_schemas(false)::text[] as schemas',
  );
  const { db, schemas } = env.rows[0] ?? { db: '', schemas: [] };
  if (parts.length === 3 && parts[0] !== db) {
    throw new InputError(
      `${field}: ${showValue(qualifiedName)} names database ${showValue(parts[0])}, but this connection is to ${showValue(db)}; drop the database part or use a connection to that database`,
      {
        field,
        value: qualifiedName,
      },
    );
  }
  const local = parts.slice(-2);
  const found = await client.query<{ oid: string; schema: string; name: string; kind: string }>(
    `select c.oid::text as oid, n.nspname::text as schema, c.relname::text as name, c.relkind::text as kind
       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where c.oid = pg_catalog.to_regclass($1)`,
    [quoteQualified(local, field)],
  );
  const rel = found.rows[0];
  if (rel === undefined) throw await notFound(client, qualifiedName, field, local, db, schemas);
  const kind = KINDS[rel.kind];
  if (kind === undefined) {
    throw new InputError(
      `${field}: ${showValue(qualifiedName)} is ${OTHER_KINDS[rel.kind] ?? `a relation of kind ${rel.kind}`}, not a table or view`,
      {
        field,
        value: qualifiedName,
      },
    );
  }
  const columns = await client.query<ColumnInfo>(
    `select a.attname::text as name, pg_catalog.format_type(a.atttypid, a.atttypmod) as type,
            a.attnotnull as "notNull", t.typcategory = 'N' as numeric
       from pg_catalog.pg_attribute a join pg_catalog.pg_type t on t.oid = a.atttypid
      where a.attrelid = $1::oid and a.attnum > 0 and not a.attisdropped
      order by a.attnum`,
    [rel.oid],
  );
  // Partial, expression and deferrable unique indexes cannot serve as ON CONFLICT arbiters,
  // so they do not count as keys here. INCLUDE columns (beyond indnkeyatts) are not key parts.
  const keys = await client.query<{ columns: string[] }>(
    `select array_agg(a.attname::text order by k.ord) as columns
       from pg_catalog.pg_index i
       cross join lateral unnest(i.indkey::int2[]) with ordinality as k(attnum, ord)
       join pg_catalog.pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
      where i.indrelid = $1::oid and i.indisunique and i.indisvalid and i.indimmediate
        and i.indpred is null and i.indexprs is null and k.ord <= i.indnkeyatts
      group by i.indexrelid, i.indisprimary
      order by i.indisprimary desc, i.indexrelid`,
    [rel.oid],
  );
  return {
    schema: rel.schema,
    name: rel.name,
    quoted: quoteQualified([rel.schema, rel.name]),
    kind,
    columns: columns.rows,
    uniqueKeys: keys.rows.map((k) => k.columns),
  };
}

async function notFound(
  client: PgClient,
  text: string,
  field: string,
  parts: string[],
  db: string,
  schemas: string[],
): Promise<InputError> {
  const wanted = parts[parts.length - 1] ?? '';
  const wantedSchema = parts.length === 2 ? parts[0] : undefined;
  // Cheap: one catalog scan, capped, compared in memory.
  const candidates = await client.query<{ schema: string; name: string }>(
    `select n.nspname::text as schema, c.relname::text as name
       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p', 'v', 'm', 'f') and n.nspname <> 'information_schema' and n.nspname !~ '^pg_'
      order by 1, 2 limit 5000`,
  );
  const limit = Math.max(2, Math.floor(wanted.length / 4));
  const similar = candidates.rows
    .map((c) => ({ c, d: editDistance(wanted, c.name) + (wantedSchema === undefined || c.schema === wantedSchema ? 0 : 1) }))
    .filter(({ c, d }) => d <= limit || c.name.startsWith(wanted) || wanted.startsWith(c.name))
    .sort((x, y) => x.d - y.d)
    .slice(0, 3)
    .map(({ c }) => displayName([c.schema, c.name]));
  const where = parts.length === 1 ? ` (searched schemas: ${schemas.length > 0 ? schemas.join(', ') : 'none on the search_path'})` : '';
  const suggestion = similar.length > 0 ? `; similar: ${similar.join(', ')}` : '';
  return new InputError(
    `${field}: table ${showValue(text)} was not found in database ${showValue(db)}${where}${suggestion}; check the name or create the table first`,
    { field, value: text, hint: similar.length > 0 ? `did you mean ${similar[0]}?` : 'check the name or create the table first' },
  );
}

/** The named columns, in the order given; unknown or repeated names are the user's to fix. */
export function requireColumns(table: TableInfo, names: readonly string[], field: string): ColumnInfo[] {
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  const seen = new Set<string>();
  return names.map((name, i) => {
    const at = `${field}[${i}]`;
    const column = byName.get(name);
    if (column === undefined) {
      const folded = table.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
      const guess = folded !== undefined ? ` (did you mean ${showValue(folded.name)}? names are case-sensitive)` : '';
      throw new InputError(
        `${at}: column ${showValue(name)} is not in ${displayName([table.schema, table.name])}${guess}; its columns are: ${table.columns.map((c) => c.name).join(', ')}`,
        { field: at, value: name },
      );
    }
    if (seen.has(name)) throw new InputError(`${at}: column ${showValue(name)} is listed twice`, { field: at, value: name });
    seen.add(name);
    return column;
  });
}

/**
 * Whether an INSERT of a query's rows (with `fields`) into `table` stores every row exactly as
 * the query returned it, so that what the partition holds afterwards can be known from the rows
 * read: the query gives every column of the table with exactly its type and type modifier (no
 * coercion, no default, no generated value), and nothing on the table — or on any of its
 * partitions — can change, add or hide a row (no trigger, no rule, no row-level security).
 * Otherwise the reason, in words.
 */
export async function storesRowsAsRead(
  client: PgClient,
  table: TableInfo,
  fields: readonly QueryField[],
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const name = displayName([table.schema, table.name]);
  if (table.kind !== 'table' && table.kind !== 'partitioned table') return { ok: false, reason: `${name} is a ${table.kind}` };
  const facts = await client.query<{ triggers: string; rules: string; rls: boolean; plain: boolean }>(
    `with tree as (select $1::regclass::oid as relid union select relid from pg_catalog.pg_partition_tree($1::regclass))
     select (select count(*) from pg_catalog.pg_trigger g where g.tgrelid in (select relid from tree) and not g.tgisinternal)::text as triggers,
            (select bool_and(c.relkind in ('r', 'p')) from pg_catalog.pg_class c where c.oid in (select relid from tree)) as plain,
            (select count(*) from pg_catalog.pg_rewrite r where r.ev_class in (select relid from tree) and r.rulename <> '_RETURN')::text as rules,
            coalesce((select bool_or(c.relrowsecurity) from pg_catalog.pg_class c where c.oid in (select relid from tree)), false) as rls`,
    [table.quoted],
  );
  const f = facts.rows[0];
  if (f === undefined || !f.plain) return { ok: false, reason: `${name} has a partition that is not a plain table` };
  if (f.triggers !== '0') return { ok: false, reason: `${name} has triggers` };
  if (f.rules !== '0') return { ok: false, reason: `${name} has rules` };
  if (f.rls) return { ok: false, reason: `${name} has row-level security` };
  const columns = await client.query<{ name: string; oid: string; typmod: number; generated: string }>(
    `select a.attname::text as name, a.atttypid::text as oid, a.atttypmod as typmod, a.attgenerated::text as generated
       from pg_catalog.pg_attribute a where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped`,
    [table.quoted],
  );
  const byName = new Map(fields.map((x) => [x.name, x]));
  for (const c of columns.rows) {
    const field = byName.get(c.name);
    if (c.generated !== '') return { ok: false, reason: `column ${c.name} is generated` };
    if (field === undefined) return { ok: false, reason: `the source query does not give column ${c.name}` };
    if (field.dataTypeID !== Number(c.oid) || field.dataTypeModifier !== c.typmod)
      return { ok: false, reason: `the source gives column ${c.name} in another type than the table's` };
  }
  return { ok: true };
}
