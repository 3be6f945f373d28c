/**
 * The change by key: what a backfill changes in a partition at the grain of the target's key
 * (or the source query's GROUP BY), measured in the database (engine/targets/postgres/
 * changeByKey.ts) and shown by the Impact step, the sign-off, the incident note and History.
 * Totals can stay equal while keys move — refunds re-labelled from "other" to "damaged" keep
 * every partition's sum — so the counts here are per key: rows added, removed and changed.
 */
import { absDecimal, addDecimal, compareAbsDecimal, isZeroDecimal } from './decimal.ts';

/** How the change was measured. */
export type KeyChangeMethod =
  /** source and target on one server: the recomputed rows full-outer-joined with the partition */
  | 'full outer join'
  /** different servers: checksums of key-hash ranges compared, only differing ranges read */
  | 'checksum bisection'
  /** the partition now against the run's snapshot of it (after the run) */
  | 'against snapshot';

/** Where the grain came from. */
export type GrainSource = 'target.key' | 'source GROUP BY' | 'whole row';

/** One numeric column's sums before and after, and how much moved between keys. */
export interface MeasureMove {
  column: string;
  before: string;
  after: string;
  /** after − before: 0 when the total stays, however much moved between keys */
  net: string;
  /** Σ |after − before| over keys: what moved, counting every key's change */
  moved: string;
}

/** One changed key, its row before → after (values as text, aligned with KeyChange.columns). */
export interface KeyRowSample {
  kind: 'added' | 'removed' | 'changed';
  /** the grain's values */
  key: (string | null)[];
  before: (string | null)[] | null;
  after: (string | null)[] | null;
}

/** A value of a grain column (e.g. reason = "damaged") and how its keys' measures moved. */
export interface KeyMover {
  column: string;
  value: string | null;
  /** keys with this value that are added, removed or changed */
  keys: number;
  /** measure column → net change (after − before) over those keys */
  net: Record<string, string>;
}

/** The counts and sums a partition's change and a run's totals share. */
export interface KeyCounts {
  /** rows before (target now, or the snapshot) and after (recomputed, or target now) */
  before: number;
  after: number;
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
  /** non-grain column → keys (present on both sides) whose value changed */
  columnChanges: Record<string, number>;
  measures: MeasureMove[];
  /** the largest movers per low-cardinality grain column (not the partition column) */
  movers: KeyMover[];
}

/** No rows on either side: where a partition's change and a run's totals start. */
export function zeroKeyCounts(): KeyCounts {
  return { before: 0, after: 0, added: 0, removed: 0, changed: 0, unchanged: 0, columnChanges: {}, measures: [], movers: [] };
}

export interface KeyChange extends KeyCounts {
  /** the partition's key */
  partition: string;
  method: KeyChangeMethod;
  grain: string[];
  grainFrom: GrainSource;
  /** the columns compared, in the order of the sample's values */
  columns: string[];
  /** at most sampleLimit changed keys */
  sample: KeyRowSample[];
  sampleLimit: number;
  /** rows' digests read into the engine (bisection's differing ranges); 0 for a join */
  digestRows: number;
  /** false when a limit stopped the measurement early; the note says which */
  complete: boolean;
  notes: string[];
}

/** The change over many partitions: summed counts, sums and movers, a sample across them. */
export interface KeyChangeTotals extends KeyCounts {
  partitions: number;
  /** partitions where any key changes */
  partitionsChanged: number;
  sample: (KeyRowSample & { partition: string })[];
  grain: string[];
  grainFrom: GrainSource | null;
  columns: string[];
  method: KeyChangeMethod | null;
}

export function keysTouched(c: Pick<KeyChange, 'added' | 'removed' | 'changed'>): number {
  return c.added + c.removed + c.changed;
}

/** Sums partitions' changes; `sample` keeps `sampleLimit` changed keys spread over the partitions (spreadSample). */
export function totalKeyChange(changes: readonly KeyChange[], sampleLimit = 20, moversPerColumn = 10): KeyChangeTotals {
  const first = changes[0];
  const totals: KeyChangeTotals = {
    partitions: changes.length,
    partitionsChanged: 0,
    ...zeroKeyCounts(),
    sample: [],
    grain: first?.grain ?? [],
    grainFrom: first?.grainFrom ?? null,
    columns: first?.columns ?? [],
    method: first?.method ?? null,
  };
  const measures = new Map<string, MeasureMove>();
  const movers = new Map<string, KeyMover>();
  for (const c of changes) {
    if (keysTouched(c) > 0) totals.partitionsChanged++;
    totals.before += c.before;
    totals.after += c.after;
    totals.added += c.added;
    totals.removed += c.removed;
    totals.changed += c.changed;
    totals.unchanged += c.unchanged;
    for (const [column, n] of Object.entries(c.columnChanges)) totals.columnChanges[column] = (totals.columnChanges[column] ?? 0) + n;
    for (const m of c.measures) {
      const sum = measures.get(m.column) ?? { column: m.column, before: '0', after: '0', net: '0', moved: '0' };
      sum.before = addDecimal(sum.before, m.before);
      sum.after = addDecimal(sum.after, m.after);
      sum.net = addDecimal(sum.net, m.net);
      sum.moved = addDecimal(sum.moved, m.moved);
      measures.set(m.column, sum);
    }
    for (const m of c.movers) {
      const id = `${m.column}\u0000${m.value ?? '\u0001null'}`;
      const sum = movers.get(id) ?? { column: m.column, value: m.value, keys: 0, net: {} };
      sum.keys += m.keys;
      for (const [col, v] of Object.entries(m.net)) sum.net[col] = addDecimal(sum.net[col], v);
      movers.set(id, sum);
    }
  }
  totals.sample = spreadSample(changes, sampleLimit);
  totals.measures = [...measures.values()];
  totals.movers = topMovers([...movers.values()], totals.measures[0]?.column, moversPerColumn);
  return totals;
}

/**
 * A sample over many partitions that shows every kind of change and many partitions: per kind
 * (added, removed, changed), each partition's first key of that kind, then each one's second …;
 * the kinds taken in turn until the limit; shown in partition then key order.
 */
function spreadSample(changes: readonly KeyChange[], limit: number): (KeyRowSample & { partition: string })[] {
  const byKind = (['added', 'removed', 'changed'] as const).map((kind) => {
    const queue: (KeyRowSample & { partition: string })[] = [];
    const lists = changes.map((c) => c.sample.filter((s) => s.kind === kind).map((s) => ({ ...s, partition: c.partition })));
    for (let round = 0; lists.some((l) => l[round] !== undefined); round++)
      for (const l of lists) if (l[round] !== undefined) queue.push(l[round] as KeyRowSample & { partition: string });
    return queue;
  });
  const out: (KeyRowSample & { partition: string })[] = [];
  while (out.length < limit && byKind.some((q) => q.length > 0))
    for (const q of byKind) {
      const next = q.shift();
      if (next && out.length < limit) out.push(next);
    }
  return out.sort((a, b) => a.partition.localeCompare(b.partition) || JSON.stringify(a.key).localeCompare(JSON.stringify(b.key)));
}

/** Per column, the movers with the largest net change of `measure` (then the most keys). */
export function topMovers(movers: readonly KeyMover[], measure: string | undefined, perColumn: number): KeyMover[] {
  const byColumn = new Map<string, KeyMover[]>();
  for (const m of movers) byColumn.set(m.column, [...(byColumn.get(m.column) ?? []), m]);
  const out: KeyMover[] = [];
  for (const list of byColumn.values()) {
    list.sort((a, b) => {
      const bySize = measure === undefined ? 0 : compareAbsDecimal(b.net[measure], a.net[measure]);
      return bySize !== 0 ? bySize : b.keys - a.keys || String(a.value).localeCompare(String(b.value));
    });
    out.push(...list.slice(0, perColumn));
  }
  return out;
}

/** "refund_amount: 12,400.00 → 12,400.00 (net 0), 1,830.00 moved between keys" in words. */
export function describeMeasure(m: MeasureMove): string {
  const net = isZeroDecimal(m.net) ? 'net 0' : `net ${m.net.startsWith('-') ? m.net : `+${m.net}`}`;
  const moved = isZeroDecimal(m.moved) ? 'nothing moved between keys' : `${absDecimal(m.moved)} moved between keys`;
  return `${m.column}: ${m.before} → ${m.after} (${net}), ${moved}`;
}

/** One sentence of the change: "2 keys added, 0 removed, 61 changed of 183 (120 unchanged)". */
export function describeKeyChange(c: Pick<KeyChange, 'added' | 'removed' | 'changed' | 'unchanged' | 'grain'>): string {
  const grain = c.grain.length > 0 ? ` by (${c.grain.join(', ')})` : '';
  if (keysTouched(c) === 0) return `no key changes${grain}: all ${c.unchanged} rows stay as they are`;
  return `${c.added} added, ${c.removed} removed, ${c.changed} changed${grain}; ${c.unchanged} unchanged`;
}

/** Changed keys in key order, so a reader scans them like a table. */
export function sortSample<T extends KeyRowSample>(rows: T[]): T[] {
  return rows.sort((x, y) => JSON.stringify(x.key).localeCompare(JSON.stringify(y.key)));
}
