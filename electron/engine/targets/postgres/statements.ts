/**
 * SQL text for the partition protocol (docs/design.md §6). Pure: every identifier arrives already
 * resolved against the catalog and is quoted here; every value is a `:named` parameter bound
 * later by bindNamed — nothing a user typed is ever spliced in as a value.
 */
import type { WriteMode } from '../../../../shared/schemas.ts';
import { assertNever } from '../../../../shared/errors.ts';
import { quoteIdent } from './sql.ts';

export interface TargetShape {
  /** Fully quoted table name, e.g. `"mart"."mart_order_daily"`. */
  quoted: string;
  partitionColumn: string;
  /** Columns the source query produces, in its order; all exist in the target. */
  columns: readonly string[];
  key: readonly string[];
}

const list = (names: readonly string[], prefix = ''): string => names.map((n) => prefix + quoteIdent(n)).join(', ');

export function partitionFilter(shape: TargetShape, alias = ''): string {
  const col = (alias ? `${alias}.` : '') + quoteIdent(shape.partitionColumn);
  return `${col} >= :partition_start AND ${col} < :partition_end`;
}

export function deletePartitionSql(shape: TargetShape): string {
  return `DELETE FROM ${shape.quoted} WHERE ${partitionFilter(shape)}`;
}

/** The source query as a derived table, so its columns can be picked by name. */
export function sourceAsTable(sourceQuery: string): string {
  // A trailing semicolon would end the statement inside the parentheses.
  const body = sourceQuery.trim().replace(/;+\s*$/, '');
  return `(\n${body}\n) AS src`;
}

/**
 * INSERT … SELECT from `from` (the source query as a derived table, or a staging table
 * aliased `src`) in the given write mode. For overwrite-partition the caller has deleted the
 * partition first in the same transaction.
 */
export function insertSql(mode: WriteMode, shape: TargetShape, from: string): string {
  const cols = list(shape.columns);
  const select = `SELECT ${list(shape.columns, 'src.')} FROM ${from}`;
  switch (mode) {
    case 'overwrite-partition':
      return `INSERT INTO ${shape.quoted} (${cols})\n${select}`;
    case 'upsert': {
      const rest = shape.columns.filter((c) => !shape.key.includes(c));
      const action =
        rest.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${rest.map((c) => `${quoteIdent(c)} = EXCLUDED.${quoteIdent(c)}`).join(', ')}`;
      return `INSERT INTO ${shape.quoted} (${cols})\n${select}\nON CONFLICT (${list(shape.key)}) ${action}`;
    }
    case 'append-dedupe': {
      // IS NOT DISTINCT FROM: a NULL key part still matches itself, so reruns never append twice.
      const match = shape.key.map((k) => `t.${quoteIdent(k)} IS NOT DISTINCT FROM src.${quoteIdent(k)}`).join(' AND ');
      return `INSERT INTO ${shape.quoted} (${cols})\n${select}\nWHERE NOT EXISTS (SELECT 1 FROM ${shape.quoted} AS t WHERE ${match})`;
    }
    default:
      return assertNever(mode, 'write mode');
  }
}

/** count(*) and sum() of the numeric columns over the source query (dry run, validation). */
export function measureSourceSql(sourceQuery: string, numericColumns: readonly string[]): string {
  return `SELECT ${measureList(numericColumns, 'src.')} FROM ${sourceAsTable(sourceQuery)}`;
}

/** The same measures over the target partition as it stands. */
export function measureTargetSql(shape: TargetShape, numericColumns: readonly string[]): string {
  return `SELECT ${measureList(numericColumns, 't.')} FROM ${shape.quoted} AS t WHERE ${partitionFilter(shape, 't')}`;
}

function measureList(numericColumns: readonly string[], prefix: string): string {
  // Sums come back as text so numeric precision survives the trip through JavaScript.
  const sums = numericColumns.map((c) => `sum(${prefix}${quoteIdent(c)})::text AS ${quoteIdent(c)}`);
  return ['count(*)::bigint AS "rows"', ...sums].join(', ');
}

export function duplicateKeysSql(shape: TargetShape): string {
  const key = list(shape.key, 't.');
  return `SELECT count(*)::bigint AS duplicates FROM (SELECT 1 FROM ${shape.quoted} AS t WHERE ${partitionFilter(shape, 't')} GROUP BY ${key} HAVING count(*) > 1) AS d`;
}

/**
 * A content checksum of the target partition that does not depend on physical row order and
 * needs no sort: the sum of a 64-bit slice of each row's md5, with the row count, hashed once
 * more. Two partitions with the same rows give the same value. (Sorting the rows' text forms
 * cost more than the write itself on large partitions.)
 */
// **Hazard**: the row is written `t.*`, never a bare `t`: a target column named "t" would win
// over the table alias and only that column would be hashed.
const TEXT_ROW_HASH = (row: string): string => `('x' || substr(md5((${row})::text), 1, 16))::bit(64)::bigint`;

export function checksumSql(shape: TargetShape): string {
  return `SELECT count(*)::bigint AS n, ${checksumOf('text', 't.*')} AS md5 FROM ${shape.quoted} AS t WHERE ${partitionFilter(shape, 't')}`;
}

/**
 * The same idea without turning rows into text: PostgreSQL's own 64-bit record hash
 * (hash_record_extended, PostgreSQL 14+), about five times cheaper. Types without an extended
 * hash function (json, point…) make it fail with 42883; the caller then falls back to text.
 */
const RECORD_ROW_HASH = (row: string): string => `hash_record_extended(${row}, 0)`;

export type ChecksumKind = 'record' | 'text';

/** The partition checksum over rows `row` (an expression of each row). */
function checksumOf(kind: ChecksumKind, row: string): string {
  const hash = kind === 'record' ? RECORD_ROW_HASH(row) : TEXT_ROW_HASH(row);
  return `md5(count(*)::text || ':' || coalesce(sum(${hash}), 0)::text)`;
}

/**
 * Fails with 42883 (or 0A000) exactly when the table's row cannot be hashed with
 * hash_record_extended: a row of NULLs still looks up every column type's hash function. Asked
 * once before the run, so the partitions need no savepoint around their checksum.
 */
export function recordHashProbeSql(shape: Pick<TargetShape, 'quoted'>): string {
  return `SELECT hash_record_extended(x.*, 0) AS h FROM (SELECT (NULL::${shape.quoted}).*) AS x`;
}

/** measureTargetSql and a checksum in one scan of the partition (inside the write transaction). */
export function measureAndChecksumSql(shape: TargetShape, numericColumns: readonly string[], kind: ChecksumKind): string {
  return `SELECT ${measureList(numericColumns, 't.')}, ${checksumOf(kind, 't.*')} AS "__checksum" FROM ${shape.quoted} AS t WHERE ${partitionFilter(shape, 't')}`;
}

/**
 * measureAndChecksumSql with the partition's marker row written from its result in the same
 * statement (`markUpsert` reads the CTE `measured`, see marks.ts markFromMeasuresSql).
 */
export function measureAndMarkSql(
  shape: TargetShape,
  numericColumns: readonly string[],
  kind: ChecksumKind,
  markUpsert: (measured: string) => string,
): string {
  return `WITH measured AS (${measureAndChecksumSql(shape, numericColumns, kind)}), mark AS (${markUpsert('measured')}) SELECT * FROM measured`;
}

/**
 * The measures and checksum measureAndChecksumSql would read from the target partition after
 * an overwrite, computed instead from the rows the source query returns — for a target that
 * provably stores them unchanged (see catalog.ts storesRowsAsRead). Each row is cast to the
 * target's own row type, `tableColumns` in the table's order, so the hash meets the same column
 * types, collations and dropped columns as a hash of `t.*`. "rows" counts only the rows inside
 * the partition, as a scan of it would; the sums and the checksum take every row, which is the
 * same thing exactly when "rows" equals the rows inserted — and otherwise the partition fails
 * validation and none of it is published.
 */
export function sourceFingerprintSql(
  sourceQuery: string,
  shape: TargetShape,
  tableColumns: readonly string[],
  numericColumns: readonly string[],
  kind: ChecksumKind,
): string {
  const row = `ROW(${list(tableColumns, 'src.')})::${shape.quoted}`;
  const sums = numericColumns.map((c) => `sum(src.${quoteIdent(c)})::text AS ${quoteIdent(c)}`);
  const measures = [`(count(*) FILTER (WHERE ${partitionFilter(shape, 'src')}))::bigint AS "rows"`, ...sums].join(', ');
  return `SELECT ${measures}, ${checksumOf(kind, row)} AS "__checksum" FROM ${sourceAsTable(sourceQuery)}`;
}

/** Staging table for the COPY path of upsert / append-dedupe; gone at commit or rollback. */
export function createStagingSql(shape: TargetShape): string {
  return `CREATE TEMP TABLE bf_stage ON COMMIT DROP AS SELECT ${list(shape.columns)} FROM ${shape.quoted} WITH NO DATA`;
}

export function copyIntoSql(tableQuoted: string, columns: readonly string[], binary = false): string {
  return `COPY ${tableQuoted} (${list(columns)}) FROM STDIN${binary ? ' (FORMAT binary)' : ''}`;
}

/**
 * The (table, partition) lock, held by the session from before the transaction begins until
 * after it ends. **Important**: not a transaction-level lock, because a REPEATABLE READ
 * transaction takes its snapshot at its first statement — the one that would take the lock —
 * so a run that committed the same partition between that snapshot and the lock would stay
 * invisible, and its rows would survive our DELETE.
 */
export const LOCK_PARTITION_SQL = `SELECT pg_try_advisory_lock(hashtextextended(:lock_key, 0)) AS locked`;
/** Ends whatever transaction is open and drops the partition lock (the session holds no other). */
export const ROLLBACK_AND_UNLOCK_SQL = `ROLLBACK; SELECT pg_advisory_unlock_all()`;
/** Commits, then drops the partition lock; a failed COMMIT ends the query before the unlock. */
export const COMMIT_AND_UNLOCK_SQL = `COMMIT; SELECT pg_advisory_unlock_all()`;

/**
 * The write transaction of the pushdown path, and (when the job has validation rules, or the
 * fingerprint comes from the source rows) its snapshot exported, so the source side can be read
 * on another connection while the rows are written — from exactly the data the INSERT … SELECT reads.
 */
export function beginWriteSql(exportSnapshot: boolean): string {
  return `BEGIN ISOLATION LEVEL REPEATABLE READ${exportSnapshot ? '; SELECT pg_export_snapshot() AS snapshot' : ''}`;
}

/** A read-only transaction on the snapshot `id` that pg_export_snapshot() returned. */
export function beginInSnapshotSql(id: string): string {
  // The id comes from the server (e.g. 00000003-0000001B-1), never from a user; checked anyway
  // because SET TRANSACTION SNAPSHOT takes no bind parameter.
  if (!/^[0-9A-F]+(?:-[0-9A-F]+)+$/i.test(id)) throw new Error(`unexpected snapshot id ${JSON.stringify(id)}`);
  return `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '${id}'`;
}
