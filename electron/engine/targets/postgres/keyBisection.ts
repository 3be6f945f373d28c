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
import { topMovers, type KeyChange, type KeyMover, type KeyRowSample } from '../../../../shared/keyChange.ts';
import type { SqlOrigin } from '../../sql/readOnlySelect.ts';
import { rangeDigestsSql, rangeSumsSql, rowsByKeyHashSql, type DiffShape } from './changeByKeySql.ts';
import { query, type PgClient } from './connect.ts';
import type { ClientPool } from './pool.ts';
import { readOnlyTransaction, userQuery } from './userQuery.ts';

/** A range is compared row by row (digests) once neither side holds more rows than this. */
const LEAF_ROWS = 2000;
/** The first level: 256 ranges (two hex digits of the key's md5). */
const FIRST_LEN = 2;
/** Deepest level: past it a range is read as digests however large (only identical keys stay together there). */
const MAX_LEN = 8;
/** Digests read per side and partition before the measurement stops as incomplete. */
const MAX_DIGEST_ROWS = 500_000;

interface Side {
  pool: ClientPool;
  /** the side's SELECT of the compared columns (changeByKeySql sourceSideSql / tableSideSql) */
  sql: string;
  /** the SQL holds a job's text: run it through userQuery */
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
  /** the result to fill in (method, grain, columns, notes) */
  base: KeyChange;
}

type Row = Record<string, unknown>;
type Run = (sql: string, params: Record<string, unknown>) => Promise<Row[]>;

interface Digest {
  rh: string;
  key: (string | null)[];
  cols: (string | null)[];
  measures: (string | null)[];
}

interface RangeSum {
  n: number;
  hs: string;
}

export async function bisectPartition(args: BisectArgs): Promise<KeyChange> {
  return onSide(args, args.source, (after) => onSide(args, args.target, (before) => bisect(args, after, before)));
}

/** `fn` with a runner for one side, inside that side's READ ONLY transaction. */
async function onSide<T>(args: BisectArgs, side: Side, fn: (run: Run) => Promise<T>): Promise<T> {
  const client = await side.pool.acquire();
  let broken = false;
  try {
    return await readOnlyTransaction(client, (c: PgClient) =>
      fn(async (sql, params) => {
        const all = { ...args.params, ...params };
        return (side.user ? await userQuery<Row>(c, sql, all, args.origin) : await query<Row>(c, sql, all)).rows;
      }),
    );
  } catch (err) {
    broken = true;
    throw err;
  } finally {
    side.pool.release(client, broken);
  }
}

async function bisect(args: BisectArgs, after: Run, before: Run): Promise<KeyChange> {
  const { shape } = args;
  const result: KeyChange = { ...args.base, sampleLimit: args.sampleLimit, notes: [...args.base.notes] };
  const level = async (run: Run, sql: string, params: Record<string, unknown>) => {
    const rows = await run(sql, params);
    return { rows, ranges: new Map(rows.filter((r) => Number(r.g) === 0).map((r) => [String(r.r), sumOf(r)])) };
  };
  let len = args.firstLen ?? FIRST_LEN;
  const leafRows = args.leafRows ?? LEAF_ROWS;
  const [a, b] = [
    await level(after, rangeSumsSql(args.source.sql, shape, true), { len }),
    await level(before, rangeSumsSql(args.target.sql, shape, true), { len }),
  ];
  const [totalA, totalB] = [a.rows.find((r) => Number(r.g) === 1) ?? {}, b.rows.find((r) => Number(r.g) === 1) ?? {}];
  result.after = Number(totalA.n ?? 0);
  result.before = Number(totalB.n ?? 0);
  let differing = differ(a.ranges, b.ranges);
  const digestsA = new Map<string, Digest>();
  const digestsB = new Map<string, Digest>();
  while (differing.length > 0) {
    const leaves = differing.filter((d) => len >= MAX_LEN || Math.max(d.a, d.b) <= leafRows).map((d) => d.range);
    const split = differing.filter((d) => !leaves.includes(d.range)).map((d) => d.range);
    if (leaves.length > 0) {
      if (digestsA.size + digestsB.size > 2 * MAX_DIGEST_ROWS) {
        result.complete = false;
        result.notes.push(`stopped after ${result.digestRows} row digests: the counts cover only the ranges read`);
        break;
      }
      await readDigests(after, rangeDigestsSql(args.source.sql, shape), len, leaves, digestsA);
      await readDigests(before, rangeDigestsSql(args.target.sql, shape), len, leaves, digestsB);
    }
    if (split.length === 0) break;
    len += 1;
    const [nextA, nextB] = [
      await level(after, rangeSumsSql(args.source.sql, shape, false), { len, parents: split }),
      await level(before, rangeSumsSql(args.target.sql, shape, false), { len, parents: split }),
    ];
    differing = differ(nextA.ranges, nextB.ranges);
  }
  result.digestRows = digestsA.size + digestsB.size;
  const changedKeys = compareDigests(args, result, digestsA, digestsB);
  result.unchanged = result.after - result.added - result.changed;
  result.measures = shape.measures.map((i, m) => {
    const column = shape.columns[i]?.name ?? '';
    const [sa, sb] = [text(totalA[`s${i}`]), text(totalB[`s${i}`])];
    return { column, before: sb, after: sa, net: subDecimal(sa, sb), moved: changedKeys.moved[m] ?? '0' };
  });
  result.sample = await sampleRows(args, after, before, changedKeys.keys);
  return result;
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

async function readDigests(run: Run, sql: string, len: number, ranges: string[], into: Map<string, Digest>): Promise<void> {
  for (const r of await run(sql, { len, ranges })) {
    into.set(String(r.kh), {
      rh: String(r.rh),
      key: r.key as (string | null)[],
      cols: r.cols as (string | null)[],
      measures: r.measures as (string | null)[],
    });
  }
}

interface ChangedKey {
  kh: string;
  kind: KeyRowSample['kind'];
  key: (string | null)[];
}

/** Added, removed and changed keys from the digests; per-column counts, what moved, movers. */
function compareDigests(
  args: BisectArgs,
  result: KeyChange,
  after: Map<string, Digest>,
  before: Map<string, Digest>,
): { keys: ChangedKey[]; moved: string[] } {
  const { shape } = args;
  const nonGrain = shape.columns.map((_, i) => i).filter((i) => !shape.grain.includes(i));
  for (const i of nonGrain) result.columnChanges[shape.columns[i]?.name ?? ''] = 0;
  const moved = shape.measures.map(() => '0');
  const movers = new Map<string, KeyMover>();
  const keys: ChangedKey[] = [];
  for (const kh of new Set([...after.keys(), ...before.keys()])) {
    const [x, y] = [after.get(kh), before.get(kh)];
    if (x && y && x.rh === y.rh) continue;
    const kind: ChangedKey['kind'] = !y ? 'added' : !x ? 'removed' : 'changed';
    result[kind] += 1;
    if (x && y) {
      nonGrain.forEach((i, c) => {
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
    keys.push({ kh, kind, key });
  }
  result.movers = topMovers([...movers.values()], shape.columns[shape.measures[0] ?? -1]?.name, args.topMovers);
  keys.sort((p, q) => JSON.stringify(p.key).localeCompare(JSON.stringify(q.key)));
  return { keys, moved };
}

/** The first sampleLimit changed keys in key order, with their full rows from each side. */
async function sampleRows(args: BisectArgs, after: Run, before: Run, keys: ChangedKey[]): Promise<KeyRowSample[]> {
  const chosen = keys.slice(0, args.sampleLimit);
  if (chosen.length === 0) return [];
  const hashes = chosen.map((k) => k.kh);
  const rows = async (run: Run, sql: string) =>
    new Map((await run(sql, { keys: hashes })).map((r) => [String(r.kh), r.row as (string | null)[]]));
  const [a, b] = [
    await rows(after, rowsByKeyHashSql(args.source.sql, args.shape)),
    await rows(before, rowsByKeyHashSql(args.target.sql, args.shape)),
  ];
  return chosen.map((k) => ({ kind: k.kind, key: k.key, before: b.get(k.kh) ?? null, after: a.get(k.kh) ?? null }));
}

const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '0');
