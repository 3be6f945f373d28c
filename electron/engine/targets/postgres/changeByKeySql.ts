/**
 * SQL text for the change by key (changeByKey.ts). Pure: identifiers arrive resolved against
 * the catalog and are quoted here; type names come from format_type() on the target's catalog;
 * values are `:named` parameters. Each side of a comparison is a SELECT of the compared columns
 * in one order plus a marker `true`, aliased positionally `AS a(c0, c1, …, p)`, so the joins
 * below never spell a user's column name (a column called "a" or "p" cannot shadow anything).
 */
import { quoteIdent } from './sql.ts';
import { partitionFilter, sourceAsTable, type TargetShape } from './statements.ts';

export interface DiffColumn {
  name: string;
  /** the target column's type, format_type() */
  type: string;
  /** a type initdb made (same name and text form on every server): cast to it on a source server */
  builtin: boolean;
  notNull: boolean;
  /** has an equality operator: compared with IS DISTINCT FROM, else as text */
  comparable: boolean;
}

export interface DiffShape {
  columns: readonly DiffColumn[];
  /** indexes into columns: the grain the rows are matched by */
  grain: readonly number[];
  /** indexes into columns: numeric columns whose sums are followed */
  measures: readonly number[];
  /** indexes into columns: grain columns whose values are reported as movers */
  movers: readonly number[];
}

const alias = (side: string, i: number): string => `${side}.c${i}`;
const aliasList = (shape: DiffShape): string => `(${shape.columns.map((_, i) => `c${i}`).join(', ')}, p)`;
/** Indexes of the columns outside the grain (the compared values). */
export const nonGrain = (shape: DiffShape): number[] => shape.columns.map((_, i) => i).filter((i) => !shape.grain.includes(i));

/** The recomputed rows: the job's source query, each column cast to the target's type (what an INSERT stores). */
export function sourceSideSql(sourceQuery: string, shape: DiffShape, castUserTypes = true): string {
  const list = shape.columns.map((c) =>
    // A type of the target's own (an enum) may not exist on a source server: compare its text there.
    c.builtin || castUserTypes ? `CAST(src.${quoteIdent(c.name)} AS ${c.type})` : `src.${quoteIdent(c.name)}::text`,
  );
  return `SELECT ${list.join(', ')}, true FROM ${sourceAsTable(sourceQuery)}`;
}

/** A partition of a table with the target's columns (the target, or a snapshot of it). */
export function tableSideSql(tableQuoted: string, target: TargetShape, shape: DiffShape, textUserTypes = false): string {
  const list = shape.columns.map((c) => (c.builtin || !textUserTypes ? `t.${quoteIdent(c.name)}` : `t.${quoteIdent(c.name)}::text`));
  return `SELECT ${list.join(', ')}, true FROM ${tableQuoted} AS t WHERE ${partitionFilter(target, 't')}`;
}

/** `a.ci` and `b.ci` differ (NULL equals NULL). */
function differs(shape: DiffShape, i: number): string {
  const c = shape.columns[i] as DiffColumn;
  return c.comparable
    ? `${alias('a', i)} IS DISTINCT FROM ${alias('b', i)}`
    : `${alias('a', i)}::text IS DISTINCT FROM ${alias('b', i)}::text`;
}

/**
 * Hash-joinable key equality. **Hazard**: IS NOT DISTINCT FROM cannot drive a FULL JOIN
 * (PostgreSQL needs a hash- or merge-joinable condition), so a nullable grain column is matched
 * by its NULL-ness and its text: two equalities the server can hash.
 */
function joinOn(shape: DiffShape): string {
  if (shape.grain.length === 0) return 'false';
  return shape.grain
    .map((i) => {
      const c = shape.columns[i] as DiffColumn;
      const [a, b] = [alias('a', i), alias('b', i)];
      if (c.notNull) return c.comparable ? `${a} = ${b}` : `${a}::text = ${b}::text`;
      return `(${a} IS NULL) = (${b} IS NULL) AND coalesce(${a}::text, '') = coalesce(${b}::text, '')`;
    })
    .join(' AND ');
}

function anyValueDiffers(shape: DiffShape): string {
  const rest = nonGrain(shape);
  return rest.length === 0 ? 'false' : rest.map((i) => differs(shape, i)).join(' OR ');
}

/** A key is added, removed or changed. */
function keyDiffers(shape: DiffShape): string {
  return `(a.p IS NULL OR b.p IS NULL OR ${anyValueDiffers(shape)})`;
}

function fromJoin(after: string, before: string, shape: DiffShape): string {
  return `FROM (${after}) AS a${aliasList(shape)} FULL JOIN (${before}) AS b${aliasList(shape)} ON ${joinOn(shape)}`;
}

const grainValue = (i: number): string => `coalesce(${alias('a', i)}, ${alias('b', i)})`;
const delta = (i: number): string => `(coalesce(${alias('a', i)}, 0)::numeric - coalesce(${alias('b', i)}, 0)::numeric)`;

/** Non-grain columns up to which the difference mask is an integer; beyond, a text of 0s and 1s. */
const INT_MASK_COLUMNS = 28;

/**
 * Per joined row, which of its parts differ, computed once: bit 0 the recomputed row is missing
 * (the key is removed), bit 1 the target row is missing (added), bit 2 + j the j-th non-grain
 * column differs (meaningful when both are present). An integer, or for wide tables a text of
 * '0'/'1' in the same order (see decodeMask).
 */
function maskSql(shape: DiffShape): string {
  const flags = ['a.p IS NULL', 'b.p IS NULL', ...nonGrain(shape).map((i) => differs(shape, i))];
  if (flags.length - 2 <= INT_MASK_COLUMNS) return `(${flags.map((f, bit) => `CASE WHEN ${f} THEN ${2 ** bit} ELSE 0 END`).join(' + ')})`;
  return `concat(${flags.map((f) => `CASE WHEN ${f} THEN '1' ELSE '0' END`).join(', ')})`;
}

/** The flags of a mask as summarySql returns it: [key removed, key added, column j differs …]. */
export function decodeMask(mask: unknown, columns: number): boolean[] {
  if (typeof mask === 'string' && /^[01]+$/.test(mask) && mask.length === columns + 2) return [...mask].map((c) => c === '1');
  const bits = Number(mask);
  return Array.from({ length: columns + 2 }, (_, bit) => (bits & (2 ** bit)) !== 0);
}

/** Rows summarySql may return before its movers are given up (a label column with too many values). */
export const MAX_SUMMARY_ROWS = 10_000;

/**
 * One pass over the join, grouped by the difference mask (so each comparison is made once per
 * row): per mask the rows, each measure's sums before (`b<i>`) and after (`a<i>`), and what moved
 * (`m<i>`, Σ|after − before|, summed only where the value differs). With movers, the same per
 * (mask, value of mover j) in GROUPING SETS — `g` tells the set (bit k−1−j clear: mover j's),
 * `v<j>` the value — from which a mover's net change is Σ(a − b) over its differing masks.
 */
export function summarySql(after: string, before: string, shape: DiffShape, withMovers = true): string {
  const mask = maskSql(shape);
  const sums = shape.measures.flatMap((i) => [
    `sum(${alias('b', i)}::numeric)::text AS b${i}`,
    `sum(${alias('a', i)}::numeric)::text AS a${i}`,
    `sum(abs(${delta(i)})) FILTER (WHERE ${differs(shape, i)})::text AS m${i}`,
  ]);
  const aggregates = ['count(*) AS n', ...sums].join(', ');
  const join = fromJoin(after, before, shape);
  if (!withMovers || shape.movers.length === 0) return `SELECT 0 AS g, ${mask} AS mask, ${aggregates} ${join} GROUP BY 2`;
  const groups = shape.movers.map(grainValue);
  const values = groups.map((g, j) => `${g}::text AS v${j}`);
  return `SELECT GROUPING(${groups.join(', ')}) AS g, ${mask} AS mask, ${values.join(', ')}, ${aggregates} ${join}
  GROUP BY GROUPING SETS (${groups.map((g) => `(${mask}, ${g})`).join(', ')}) LIMIT ${MAX_SUMMARY_ROWS + 1}`;
}

const textArray = (side: string, shape: DiffShape): string => `ARRAY[${shape.columns.map((_, i) => `${alias(side, i)}::text`).join(', ')}]`;

/**
 * At most `:sample_limit` changed keys with their rows before and after, as text arrays aligned
 * with the columns. No ORDER BY: the server stops at the limit instead of sorting every key.
 */
export function sampleSql(after: string, before: string, shape: DiffShape): string {
  const kind = `CASE WHEN b.p IS NULL THEN 'added' WHEN a.p IS NULL THEN 'removed' ELSE 'changed' END`;
  const key = `ARRAY[${shape.grain.map((i) => `${grainValue(i)}::text`).join(', ')}]::text[]`;
  return `SELECT ${kind} AS kind, ${key} AS key,
       CASE WHEN a.p THEN ${textArray('a', shape)} END AS after,
       CASE WHEN b.p THEN ${textArray('b', shape)} END AS before
  ${fromJoin(after, before, shape)}
 WHERE ${keyDiffers(shape)}
 LIMIT :sample_limit`;
}

// ---- checksum bisection (source and target on different servers) ----

/**
 * Each row of one side with its key's hash `kh` and its row's hash `rh` (md5 of the values'
 * text), computed the same way on both servers: the source's columns are cast to the target's
 * types first, and both sessions run in the job's time zone with ISO dates (pool.ts).
 */
function hashed(side: string, shape: DiffShape): string {
  const key = `ARRAY[${shape.grain.map((i) => `x.c${i}::text`).join(', ')}]::text`;
  const row = `ARRAY[${shape.columns.map((_, i) => `x.c${i}::text`).join(', ')}]::text`;
  return `SELECT md5(${key}) AS kh, md5(${row}) AS rh, x.* FROM (${side}) AS x${aliasList(shape)}`;
}

const rowHash64 = `('x' || left(h.rh, 16))::bit(64)::bigint`;

/**
 * Count and sum of row hashes per key-hash range (the first `:len` hex digits of kh) — within
 * the ranges `:parents` (each `:len - 1` digits long) after the first level. The first level
 * also returns the side's totals (g = 1): row count and each measure's sum.
 */
export function rangeSumsSql(side: string, shape: DiffShape, first: boolean): string {
  const sums = shape.measures.map((i) => `, sum(h.c${i}::numeric)::text AS s${i}`).join('');
  const source = `(${hashed(side, shape)}) AS h`;
  if (first) {
    return `SELECT GROUPING(left(h.kh, :len)) AS g, left(h.kh, :len) AS r, count(*) AS n, sum(${rowHash64})::text AS hs${sums}
  FROM ${source} GROUP BY GROUPING SETS ((left(h.kh, :len)), ())`;
  }
  return `SELECT 0 AS g, left(h.kh, :len) AS r, count(*) AS n, sum(${rowHash64})::text AS hs
  FROM ${source} WHERE left(h.kh, :len - 1) = ANY(:parents::text[]) GROUP BY 2`;
}

/**
 * The digest of every row in the ranges `:ranges` (`:len` digits): its key's hash and 64 bits of
 * its row's hash in one text (`d`, 48 hex digits) — enough to tell added, removed and changed
 * keys without the rows.
 */
export function rangeDigestsSql(side: string, shape: DiffShape, everyRange = false): string {
  const where = everyRange ? '' : ' WHERE left(h.kh, :len) = ANY(:ranges::text[])';
  return `SELECT h.kh || left(h.rh, 16) AS d FROM (${hashed(side, shape)}) AS h${where}`;
}

/** A side's row count and measure sums alone (g = 1, as rangeSumsSql's totals): no hashing. */
export function sideTotalsSql(side: string, shape: DiffShape): string {
  const sums = shape.measures.map((i) => `, sum(x.c${i}::numeric)::text AS s${i}`).join('');
  return `SELECT 1 AS g, count(*) AS n${sums} FROM (${side}) AS x${aliasList(shape)}`;
}

/**
 * For the keys whose hashes are `:keys` (those that differ): the grain's values, a short hash of
 * each non-grain column (NULL stays NULL), the measures' values, and — for the keys in `:sample`
 * — the whole row as text: which columns changed, what the measures moved, and the sample's
 * before → after.
 */
export function keyDetailsSql(side: string, shape: DiffShape): string {
  const key = `ARRAY[${shape.grain.map((i) => `h.c${i}::text`).join(', ')}]::text[]`;
  const rest = nonGrain(shape);
  const columns = rest.length === 0 ? 'ARRAY[]::text[]' : `ARRAY[${rest.map((i) => `left(md5(h.c${i}::text), 16)`).join(', ')}]::text[]`;
  const measures =
    shape.measures.length === 0 ? 'ARRAY[]::text[]' : `ARRAY[${shape.measures.map((i) => `h.c${i}::numeric::text`).join(', ')}]::text[]`;
  const row = `ARRAY[${shape.columns.map((_, i) => `h.c${i}::text`).join(', ')}]::text[]`;
  return `SELECT h.kh, ${key} AS key, ${columns} AS cols, ${measures} AS measures, CASE WHEN h.kh = ANY(:sample::text[]) THEN ${row} END AS row
  FROM (${hashed(side, shape)}) AS h WHERE h.kh = ANY(:keys::text[])`;
}

/** Fails with 42883 when the type has no equality operator (json, point …): compare its text. */
export function equalityProbeSql(type: string): string {
  return `SELECT NULL::${type} IS DISTINCT FROM NULL::${type} AS d`;
}
