/**
 * The change by key when source and target are on different servers: checksum bisection by
 * key-hash range. Each side, in its own READ ONLY transaction (one snapshot for every level),
 * sums a 64-bit hash of every row per range of its key's md5 (`left(kh, len)`); ranges whose
 * count or sum differ are split sixteen ways and summed again, until a range is small enough
 * (LEAF_ROWS) — then each side sends a digest per row of just that range (key hash, row hash,
 * the grain's values, a short hash per column, the measures). Equal ranges are never read
 * further, so what crosses the network grows with the change, not the partition.
 */
import { absDecimal, addDecimal, subDecimal } from '../../../../shared/decimal.ts';
import { sortSample, topMovers, type KeyChange, type KeyMover, type KeyRowSample } from '../../../../shared/keyChange.ts';
import type { SqlOrigin } from '../../sql/readOnlySelect.ts';
import { keyDetailsSql, nonGrain, rangeDigestsSql, rangeSumsSql, sideTotalsSql, type DiffShape } from './changeByKeySql.ts';
import { query, type PgClient } from './connect.ts';
import type { ClientPool } from './pool.ts';
import { userQuery } from './userQuery.ts';

/** A range is compared row by row (digests) once neither side holds more rows than this. */
const LEAF_ROWS = 2000;
/** The first level: 256 ranges (two hex digits of the key's md5). */
const FIRST_LEN = 2;
/** Deepest level: past it a range is read as digests however large (only identical keys stay together there). */
const MAX_LEN = 8;
/** Digests read per side and partition before the measurement stops as incomplete. */
const MAX_DIGEST_ROWS = 2_000_000;
/** Differing keys whose details (column hashes, measures) are read per partition. */
const MAX_DETAIL_KEYS = 200_000;

interface Side {
  pool: ClientPool;
  /** the side's SELECT of the compared columns (changeByKeySql sourceSideSql / tableSideSql) */
  sql: string;
  /** the SQL holds a job's text: run it through userQuery (the user-SQL guard) */
  user: boolean;
}

export interface BisectArgs {
  partition: string;
  source: Side;
  target: Side;
  shape: DiffShape;
  params: Record<string, string>;
  origin: SqlOrigin;
  sampleLimit: number;
  topMovers: number;
  /** hex digits of the first level's ranges (default FIRST_LEN) */
  firstLen?: number | undefined;
  /** rows a range may hold before it is read as digests (default LEAF_ROWS) */
  leafRows?: number | undefined;
  /**
   * Read every row's digest at once, without range sums: cheaper where most ranges differ anyway
   * (changes spread over the whole key space), as the partition before showed.
   */
  direct?: boolean;
  /** the result to fill in (method, grain, columns, notes) */
  base: KeyChange;
}

type Row = Record<string, unknown>;
type Run = (sql: string, params: Record<string, unknown>) => Promise<Row[]>;

interface RangeSum {
  n: number;
  hs: string;
}

/** The change, and whether it was spread over most key ranges (the next partition may read digests directly). */
export async function bisectPartition(args: BisectArgs): Promise<{ change: KeyChange; spread: boolean }> {
  return onSide(args, args.source, (after) => onSide(args, args.target, (before) => bisect(args, after, before)));
}

/** `fn` with a runner for one side, inside that side's READ ONLY transaction (one snapshot for every level). */
function onSide<T>(args: BisectArgs, side: Side, fn: (run: Run) => Promise<T>): Promise<T> {
  return side.pool.read((c: PgClient) =>
    fn(async (sql, params) => {
      const all = { ...args.params, ...params };
      return (side.user ? await userQuery<Row>(c, sql, all, args.origin) : await query<Row>(c, sql, all)).rows;
    }),
  );
}

async function bisect(args: BisectArgs, after: Run, before: Run): Promise<{ change: KeyChange; spread: boolean }> {
  const { shape } = args;
  const result: KeyChange = { ...args.base, sampleLimit: args.sampleLimit, notes: [...args.base.notes] };
  const level = async (run: Run, sql: string, params: Record<string, unknown>) => {
    const rows = await run(sql, params);
    return { rows, ranges: new Map(rows.filter((r) => Number(r.g) === 0).map((r) => [String(r.r), sumOf(r)])) };
  };
  let len = args.firstLen ?? FIRST_LEN;
  const leafRows = args.leafRows ?? LEAF_ROWS;
  const digestsA = new Map<string, string>();
  const digestsB = new Map<string, string>();
  // Each level asks both sides at once: they are separate sessions (often separate servers).
  const [a, b] = await Promise.all(
    args.direct
      ? [level(after, sideTotalsSql(args.source.sql, shape), {}), level(before, sideTotalsSql(args.target.sql, shape), {})]
      : [
          level(after, rangeSumsSql(args.source.sql, shape, true), { len }),
          level(before, rangeSumsSql(args.target.sql, shape, true), { len }),
        ],
  );
  const [totalA, totalB] = [a.rows.find((r) => Number(r.g) === 1) ?? {}, b.rows.find((r) => Number(r.g) === 1) ?? {}];
  result.after = Number(totalA.n ?? 0);
  result.before = Number(totalB.n ?? 0);
  if (args.direct) {
    await Promise.all([
      readDigests(after, rangeDigestsSql(args.source.sql, shape, true), len, [], digestsA),
      readDigests(before, rangeDigestsSql(args.target.sql, shape, true), len, [], digestsB),
    ]);
  }
  let differing = args.direct ? [] : differ(a.ranges, b.ranges);
  while (differing.length > 0) {
    const leaves = differing.filter((d) => len >= MAX_LEN || Math.max(d.a, d.b) <= leafRows).map((d) => d.range);
    const split = differing.filter((d) => !leaves.includes(d.range)).map((d) => d.range);
    if (leaves.length > 0) {
      if (digestsA.size + digestsB.size > 2 * MAX_DIGEST_ROWS) {
        result.complete = false;
        result.notes.push(`stopped after ${digestsA.size + digestsB.size} row digests: the counts cover only the ranges read`);
        break;
      }
      await Promise.all([
        readDigests(after, rangeDigestsSql(args.source.sql, shape), len, leaves, digestsA),
        readDigests(before, rangeDigestsSql(args.target.sql, shape), len, leaves, digestsB),
      ]);
    }
    if (split.length === 0) break;
    len += 1;
    const [nextA, nextB] = await Promise.all([
      level(after, rangeSumsSql(args.source.sql, shape, false), { len, parents: split }),
      level(before, rangeSumsSql(args.target.sql, shape, false), { len, parents: split }),
    ]);
    differing = differ(nextA.ranges, nextB.ranges);
  }
  result.digestRows = digestsA.size + digestsB.size;
  const kinds = new Map<string, KeyRowSample['kind']>();
  for (const [kh, rh] of digestsA) {
    const other = digestsB.get(kh);
    if (other === undefined) kinds.set(kh, 'added');
    else if (other !== rh) kinds.set(kh, 'changed');
  }
  for (const kh of digestsB.keys()) if (!digestsA.has(kh)) kinds.set(kh, 'removed');
  for (const kind of kinds.values()) result[kind] += 1;
  result.unchanged = result.after - result.added - result.changed;
  const firstLen = args.firstLen ?? FIRST_LEN;
  const rangesHit = new Set([...kinds.keys()].map((kh) => kh.slice(0, firstLen))).size;
  const spread = args.direct
    ? rangesHit > 0.5 * Math.min(16 ** firstLen, Math.max(result.before, result.after))
    : result.digestRows > 0.5 * (result.before + result.after);
  // The sample: the changed keys with the smallest hashes — a spread over the key space, the same on every rerun.
  const ordered = [...kinds.keys()].sort();
  const sample = ordered.slice(0, args.sampleLimit);
  const detailed = ordered.length <= MAX_DETAIL_KEYS ? ordered : sample;
  if (detailed !== ordered) {
    result.complete = false;
    result.notes.push(`${ordered.length} keys differ: column counts, sums moved and movers are not measured past ${MAX_DETAIL_KEYS}`);
  }
  const [detailsA, detailsB] =
    detailed.length === 0
      ? [new Map<string, Detail>(), new Map<string, Detail>()]
      : await Promise.all([
          readDetails(after, keyDetailsSql(args.source.sql, shape), detailed, sample),
          readDetails(before, keyDetailsSql(args.target.sql, shape), detailed, sample),
        ]);
  const moved = compareDetails(args, result, kinds, detailsA, detailsB, detailed !== ordered);
  result.measures = shape.measures.map((i, m) => {
    const column = shape.columns[i]?.name ?? '';
    const [sa, sb] = [text(totalA[`s${i}`]), text(totalB[`s${i}`])];
    return { column, before: sb, after: sa, net: subDecimal(sa, sb), moved: moved[m] ?? '0' };
  });
  result.sample = sortSample(
    sample.map((kh) => ({
      kind: kinds.get(kh) ?? 'changed',
      key: (detailsA.get(kh) ?? detailsB.get(kh))?.key ?? [],
      before: detailsB.get(kh)?.row ?? null,
      after: detailsA.get(kh)?.row ?? null,
    })),
  );
  return { change: result, spread };
}

function sumOf(r: Row): RangeSum {
  return { n: Number(r.n ?? 0), hs: text(r.hs) };
}

/** Ranges whose count or hash sum differ (or that one side lacks), with each side's count. */
function differ(a: Map<string, RangeSum>, b: Map<string, RangeSum>): { range: string; a: number; b: number }[] {
  const out: { range: string; a: number; b: number }[] = [];
  for (const range of new Set([...a.keys(), ...b.keys()])) {
    const [x, y] = [a.get(range), b.get(range)];
    if (x?.n !== y?.n || x?.hs !== y?.hs) out.push({ range, a: x?.n ?? 0, b: y?.n ?? 0 });
  }
  return out.sort((p, q) => p.range.localeCompare(q.range));
}

/** Key hash → 64 bits of the row hash, for every row of the ranges. */
async function readDigests(run: Run, sql: string, len: number, ranges: string[], into: Map<string, string>): Promise<void> {
  for (const r of await run(sql, { len, ranges })) {
    const d = String(r.d);
    into.set(d.slice(0, 32), d.slice(32));
  }
}

interface Detail {
  key: (string | null)[];
  cols: (string | null)[];
  measures: (string | null)[];
  row: (string | null)[] | null;
}

async function readDetails(run: Run, sql: string, keys: string[], sample: string[]): Promise<Map<string, Detail>> {
  const out = new Map<string, Detail>();
  for (const r of await run(sql, { keys, sample })) {
    out.set(String(r.kh), {
      key: r.key as (string | null)[],
      cols: r.cols as (string | null)[],
      measures: r.measures as (string | null)[],
      row: (r.row as (string | null)[] | null) ?? null,
    });
  }
  return out;
}

/** Per-column counts, what each measure moved (Σ|after − before|) and the movers, from the differing keys' details. */
function compareDetails(
  args: BisectArgs,
  result: KeyChange,
  kinds: Map<string, KeyRowSample['kind']>,
  after: Map<string, Detail>,
  before: Map<string, Detail>,
  partial: boolean,
): string[] {
  const { shape } = args;
  const rest = nonGrain(shape);
  for (const i of rest) result.columnChanges[shape.columns[i]?.name ?? ''] = 0;
  const moved = shape.measures.map(() => '0');
  if (partial) return moved;
  const movers = new Map<string, KeyMover>();
  for (const [kh, kind] of kinds) {
    const [x, y] = [after.get(kh), before.get(kh)];
    if (kind === 'changed' && x && y) {
      rest.forEach((i, c) => {
        const name = shape.columns[i]?.name ?? '';
        if (x.cols[c] !== y.cols[c]) result.columnChanges[name] = (result.columnChanges[name] ?? 0) + 1;
      });
    }
    const deltas = shape.measures.map((_, m) => subDecimal(x?.measures[m] ?? '0', y?.measures[m] ?? '0'));
    deltas.forEach((d, m) => (moved[m] = addDecimal(moved[m], absDecimal(d))));
    const key = (x ?? y)?.key ?? [];
    for (const i of shape.movers) {
      const column = shape.columns[i]?.name ?? '';
      const value = key[shape.grain.indexOf(i)] ?? null;
      const id = `${column}\u0000${value ?? '\u0001'}`;
      const mover = movers.get(id) ?? { column, value, keys: 0, net: {} };
      mover.keys += 1;
      shape.measures.forEach((mi, m) => {
        const name = shape.columns[mi]?.name ?? '';
        mover.net[name] = addDecimal(mover.net[name], deltas[m]);
      });
      movers.set(id, mover);
    }
  }
  result.movers = topMovers([...movers.values()], shape.columns[shape.measures[0] ?? -1]?.name, args.topMovers);
  return moved;
}

const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '0');
