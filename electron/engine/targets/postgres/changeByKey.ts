/**
 * The change by key, measured in the database (shared/keyChange.ts says what it is):
 *
 *   - source and target on one server: the job's source query (its recomputed rows, cast to the
 *     target's column types) FULL OUTER JOINed with the target partition on the grain, in one
 *     READ ONLY transaction — one pass for the counts, per-column changes, sums and movers, and
 *     a second, bounded one for a sample of changed keys when anything changed;
 *   - different servers: checksum bisection by key-hash range (keyBisection.ts);
 *   - after a run: the partition now against the run's snapshot of it, the same join.
 *
 * No partition is read into this process: the join runs on the server, and bisection reads
 * only digests of the ranges whose checksums differ. The job's SQL passes the user-SQL guard
 * before it is composed (checkReadOnlySelect), and the composed statement through userQuery inside
 * a READ ONLY transaction (pool.read), so nothing here can write.
 */
import type { Partition } from '../../../../shared/partitions.ts';
import type { PostgresJob } from '../../../../shared/schemas.ts';
import { InputError } from '../../../../shared/errors.ts';
import { addDecimal, subDecimal } from '../../../../shared/decimal.ts';
import {
  keysTouched,
  sortSample,
  topMovers,
  zeroKeyCounts,
  type GrainSource,
  type KeyChange,
  type KeyChangeMethod,
  type KeyMover,
  type KeyRowSample,
} from '../../../../shared/keyChange.ts';
import { checkReadOnlySelect, type SqlOrigin } from '../../sql/readOnlySelect.ts';
import { sourceGrouping } from '../../sql/sourceGrouping.ts';
import {
  decodeMask,
  nonGrain,
  equalityProbeSql,
  MAX_SUMMARY_ROWS,
  sampleSql,
  sourceSideSql,
  summarySql,
  tableSideSql,
  type DiffColumn,
  type DiffShape,
} from './changeByKeySql.ts';
import { query, type PgClient } from './connect.ts';
import type { TableInfo } from './catalog.ts';
import type { KeyChangeOptions } from '../../executor/types.ts';
import { bisectPartition } from './keyBisection.ts';
import type { ClientPool } from './pool.ts';
import type { TargetShape } from './statements.ts';
import { userQuery } from './userQuery.ts';

export interface KeyDiffContext {
  job: PostgresJob;
  table: TableInfo;
  /** the columns the job writes, its partition column and key */
  shape: TargetShape;
  sameDatabase: boolean;
  sourcePool: ClientPool;
  targetPool: ClientPool;
}

/** Mover columns: grain columns with at most this many distinct values (by the planner's statistics). */
const MOVER_MAX_DISTINCT = 200;
const SUMMABLE = /^(smallint|integer|bigint|numeric|real|double precision)\b/;
const SNAPSHOT_TABLE = /^"backfill_runbook_snapshots"\."s_[0-9a-f]{32}"$/;

interface ColumnFacts {
  name: string;
  type: string;
  notNull: boolean;
  builtin: boolean;
  category: string;
  distinct: number | null;
}

type Row = Record<string, unknown>;

export class KeyDiff {
  private constructor(
    private readonly ctx: KeyDiffContext,
    readonly diff: DiffShape,
    readonly grainFrom: GrainSource,
    private readonly origin: SqlOrigin,
    private readonly notes: string[],
  ) {}

  /** The user-SQL guard's parse check of the job's source query, before any of it is composed or sent. */
  private static async guard(job: PostgresJob): Promise<SqlOrigin> {
    const origin: SqlOrigin = { field: 'source.query', where: `job "${job.name}"` };
    await checkReadOnlySelect(job.source.query, origin);
    return origin;
  }

  /** Checks the job's SQL, reads the target's column facts and decides grain, measures and movers. */
  static async prepare(ctx: KeyDiffContext): Promise<KeyDiff> {
    const { job, shape } = ctx;
    const origin = await KeyDiff.guard(job);
    const facts = await ctx.targetPool.use((c) => columnFacts(c, ctx.table));
    const byName = new Map(facts.map((f) => [f.name, f]));
    const comparable = await ctx.targetPool.use((c) => probeEquality(c, [...new Set(facts.map((f) => f.type))]));
    const columns: DiffColumn[] = shape.columns.map((name) => {
      const f = byName.get(name);
      if (!f) throw new Error(`column ${name} is not in ${ctx.table.quoted}`);
      return { name, type: f.type, builtin: f.builtin, notNull: f.notNull, comparable: comparable.get(f.type) ?? false };
    });
    const notes: string[] = [];
    let grainNames: readonly string[] = shape.key;
    let grainFrom: GrainSource = 'target.key';
    if (grainNames.length === 0) {
      const grouped = await sourceGrouping(job.source.query, [...shape.columns]);
      if (grouped && grouped.length > 0) {
        grainNames = grouped;
        grainFrom = 'source GROUP BY';
      } else {
        grainNames = shape.columns;
        grainFrom = 'whole row';
        notes.push(
          'the target has no key and the source query no GROUP BY: rows are compared whole, so a changed row counts as one removed and one added',
        );
      }
    }
    const grain = grainNames.map((n) => shape.columns.indexOf(n)).filter((i) => i >= 0);
    const index = (i: number) => columns[i] as DiffColumn;
    const measures = columns
      .map((_, i) => i)
      .filter((i) => !grain.includes(i) && index(i).name !== shape.partitionColumn && SUMMABLE.test(index(i).type));
    const movers = grain.filter((i) => {
      const f = byName.get(index(i).name);
      if (!f || f.name === shape.partitionColumn) return false;
      if (f.distinct !== null) return f.distinct > 0 && f.distinct <= MOVER_MAX_DISTINCT;
      // No statistics yet: labels (text, booleans, enums) are worth grouping by, ids and times are not.
      return ['S', 'B', 'E'].includes(f.category);
    });
    return new KeyDiff(ctx, { columns, grain, measures, movers }, grainFrom, origin, notes);
  }

  /** What writing the partition would change: the recomputed rows against the partition now. */
  async recomputed(partition: Partition, options: KeyChangeOptions = {}): Promise<KeyChange> {
    const { job, table, shape } = this.ctx;
    const params = paramsOf(partition, 'change-by-key');
    const before = tableSideSql(table.quoted, shape, this.diff);
    if (!this.ctx.sameDatabase) {
      const { change, spread } = await bisectPartition({
        partition: partition.key,
        source: { pool: this.ctx.sourcePool, sql: sourceSideSql(job.source.query, this.diff, false), user: true },
        target: { pool: this.ctx.targetPool, sql: tableSideSql(table.quoted, shape, this.diff, true), user: false },
        shape: this.diff,
        params,
        origin: this.origin,
        sampleLimit: options.sampleLimit ?? 20,
        topMovers: options.topMovers ?? 20,
        firstLen: options.bisection?.firstLen,
        leafRows: options.bisection?.leafRows,
        direct: this.spread && options.bisection === undefined,
        base: this.base(partition.key, 'checksum bisection'),
      });
      // Most rows' digests were read anyway: the next partition skips the range sums (and returns to them once changes thin out).
      this.spread = spread;
      return change;
    }
    const after = sourceSideSql(job.source.query, this.diff);
    return this.ctx.targetPool.read((c) =>
      this.join(partition.key, 'full outer join', after, before, options, (sql, p) =>
        userQuery<Row>(c, sql, { ...params, ...p }, this.origin),
      ),
    );
  }

  /** The partition now against the run's snapshot of it: what the run changed (after it ran). */
  async againstSnapshot(partition: Partition, runId: string, options: KeyChangeOptions = {}): Promise<KeyChange> {
    const { table, shape } = this.ctx;
    const params = paramsOf(partition, runId);
    return this.ctx.targetPool.read(async (c) => {
      const snapshot = await snapshotTable(c, runId, `${table.schema}.${table.name}`, partition.key);
      const after = tableSideSql(table.quoted, shape, this.diff);
      const before = tableSideSql(snapshot, shape, this.diff);
      return this.join(partition.key, 'against snapshot', after, before, options, (sql, p) => query<Row>(c, sql, { ...params, ...p }));
    });
  }

  private base(partition: string, method: KeyChangeMethod): KeyChange {
    const names = this.diff.columns.map((c) => c.name);
    return {
      partition,
      method,
      grain: this.diff.grain.map((i) => names[i] as string),
      grainFrom: this.grainFrom,
      columns: names,
      ...zeroKeyCounts(),
      sample: [],
      sampleLimit: 0,
      digestRows: 0,
      complete: true,
      notes: [...this.notes],
    };
  }

  private async join(
    partition: string,
    method: KeyChangeMethod,
    after: string,
    before: string,
    options: KeyChangeOptions,
    run: (sql: string, params: Record<string, unknown>) => Promise<{ rows: Row[] }>,
  ): Promise<KeyChange> {
    const { diff } = this;
    const sampleLimit = options.sampleLimit ?? 20;
    const result = this.base(partition, method);
    result.sampleLimit = sampleLimit;
    let summary = await run(summarySql(after, before, diff, this.withMovers), {});
    if (summary.rows.length > MAX_SUMMARY_ROWS) {
      // A label column with more values than its statistics said: movers are given up, counts kept.
      this.withMovers = false;
      this.notes.push(`no movers: a grain column has more than ${MAX_SUMMARY_ROWS} changed values per partition`);
      result.notes.push(this.notes.at(-1) as string);
      summary = await run(summarySql(after, before, diff, false), {});
    }
    const movers = this.withMovers ? diff.movers : [];
    const all = (1 << movers.length) - 1;
    // Every grouping set covers every row: the counts and sums come from the first one.
    const setOf = (g: number) => movers.findIndex((_, j) => (all & ~g) === 1 << (movers.length - 1 - j));
    const first = summary.rows.filter((r) => movers.length === 0 || setOf(Number(r.g)) === 0);
    const rest = nonGrain(diff);
    const sums = new Map<number, { before: string; after: string; moved: string }>(
      diff.measures.map((i) => [i, { before: '0', after: '0', moved: '0' }]),
    );
    for (const r of first) {
      const n = Number(r.n ?? 0);
      const [removed, added, ...columns] = decodeMask(r.mask, rest.length);
      if (!removed) result.after += n;
      if (!added) result.before += n;
      if (added) result.added += n;
      else if (removed) result.removed += n;
      else if (columns.some(Boolean)) {
        result.changed += n;
        columns.forEach((d, j) => {
          const name = (diff.columns[rest[j] ?? 0] as DiffColumn).name;
          if (d) result.columnChanges[name] = (result.columnChanges[name] ?? 0) + n;
        });
      }
      for (const [i, sum] of sums) {
        sum.before = addDecimal(sum.before, text(r[`b${i}`]));
        sum.after = addDecimal(sum.after, text(r[`a${i}`]));
        sum.moved = addDecimal(sum.moved, text(r[`m${i}`]));
      }
    }
    for (const i of rest) result.columnChanges[(diff.columns[i] as DiffColumn).name] ??= 0;
    result.unchanged = result.after - result.added - result.changed;
    result.measures = [...sums].map(([i, m]) => ({
      column: (diff.columns[i] as DiffColumn).name,
      ...m,
      net: subDecimal(m.after, m.before),
    }));
    result.movers = this.movers(movers.length > 0 ? summary.rows : [], setOf, rest.length, options.topMovers ?? 20);
    if (keysTouched(result) > 0 && sampleLimit > 0) {
      const sample = await run(sampleSql(after, before, diff), { sample_limit: sampleLimit });
      result.sample = sortSample(sample.rows.map(sampleRow));
    }
    return result;
  }

  private withMovers = true;
  /** Across servers: the last partition's changes were spread over most of its key ranges. */
  private spread = false;

  /** Per mover column and value, over the masks where the key differs: keys, and each measure's net change Σ(after − before). */
  private movers(rows: Row[], setOf: (g: number) => number, columns: number, top: number): KeyMover[] {
    const { diff } = this;
    const byValue = new Map<string, KeyMover>();
    for (const r of rows) {
      const j = setOf(Number(r.g));
      const [removed, added, ...changed] = decodeMask(r.mask, columns);
      if (j < 0 || !(removed || added || changed.some(Boolean))) continue;
      const column = (diff.columns[diff.movers[j] ?? 0] as DiffColumn).name;
      const value = (r[`v${j}`] as string | null) ?? null;
      const id = `${column}\u0000${value ?? '\u0001'}`;
      const mover = byValue.get(id) ?? { column, value, keys: 0, net: {} };
      mover.keys += Number(r.n ?? 0);
      for (const i of diff.measures) {
        const name = (diff.columns[i] as DiffColumn).name;
        mover.net[name] = addDecimal(mover.net[name], subDecimal(text(r[`a${i}`]), text(r[`b${i}`])));
      }
      byValue.set(id, mover);
    }
    return topMovers([...byValue.values()], diff.columns[diff.measures[0] ?? -1]?.name, top);
  }
}

function paramsOf(partition: Partition, runId: string): Record<string, string> {
  return { partition_start: partition.start, partition_end: partition.end, run_id: runId };
}

const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '0');

function sampleRow(r: Row): KeyRowSample {
  return {
    kind: r.kind as KeyRowSample['kind'],
    key: r.key as (string | null)[],
    before: (r.before as (string | null)[] | null) ?? null,
    after: (r.after as (string | null)[] | null) ?? null,
  };
}

async function columnFacts(client: PgClient, table: TableInfo): Promise<ColumnFacts[]> {
  const r = await query<{ name: string; type: string; notNull: boolean; builtin: boolean; category: string; distinct: number | null }>(
    client,
    `SELECT a.attname::text AS name, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS "notNull",
            a.atttypid < 16384 AS builtin, t.typcategory::text AS category,
            (SELECT s.n_distinct FROM pg_catalog.pg_stats s
              WHERE s.schemaname = :schema AND s.tablename = :table AND s.attname = a.attname
              ORDER BY s.inherited DESC LIMIT 1)::float8 AS distinct
       FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
      WHERE a.attrelid = pg_catalog.to_regclass(:quoted) AND a.attnum > 0 AND NOT a.attisdropped`,
    { schema: table.schema, table: table.name, quoted: table.quoted },
  );
  return r.rows.map((f) => ({ ...f, distinct: f.distinct === null ? null : Number(f.distinct) }));
}

/** Which types have an equality operator (asked once per type; the names come from format_type). */
async function probeEquality(client: PgClient, types: readonly string[]): Promise<Map<string, boolean>> {
  const out = new Map<string, boolean>();
  for (const type of types) {
    try {
      await query(client, equalityProbeSql(type));
      out.set(type, true);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== '42883' && code !== '0A000') throw err;
      out.set(type, false);
    }
  }
  return out;
}

/** The run's snapshot table of this partition, as recorded by the snapshot step; its name is checked, never trusted. */
async function snapshotTable(client: PgClient, runId: string, table: string, key: string): Promise<string> {
  const exists = await query<{ t: string | null }>(client, `SELECT to_regclass('backfill_runbook_snapshots.snapshots')::text AS t`);
  const found = exists.rows[0]?.t
    ? await query<{ snapshot_table: string }>(
        client,
        `SELECT snapshot_table FROM backfill_runbook_snapshots.snapshots WHERE run_id = :run_id AND target_table = :table AND partition_key = :key`,
        { run_id: runId, table, key },
      )
    : { rows: [] };
  const name = found.rows[0]?.snapshot_table;
  if (name === undefined)
    throw new InputError(`no snapshot of ${table} partition ${key} for run ${runId}: the change cannot be measured against it`, {
      field: 'snapshot',
      value: key,
      hint: 'take the snapshot before the run (run-backfill snapshot …, or the Snapshot step)',
    });
  if (!SNAPSHOT_TABLE.test(name))
    throw new Error(`the snapshot of ${table} partition ${key} names an unexpected table ${JSON.stringify(name)}`);
  return name;
}
