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
 * before it is composed (checkReadOnlySelect) and runs through userQuery inside
 * readOnlyTransaction, so nothing here can write.
 */
import type { Partition } from '../../../../shared/partitions.ts';
import type { PostgresJob } from '../../../../shared/schemas.ts';
import { InputError } from '../../../../shared/errors.ts';
import type { GrainSource, KeyChange, KeyChangeMethod, KeyMover, KeyRowSample } from '../../../../shared/keyChange.ts';
import { checkReadOnlySelect, type SqlOrigin } from '../../sql/readOnlySelect.ts';
import { sourceGrouping } from '../../sql/sourceGrouping.ts';
import { equalityProbeSql, sampleSql, sourceSideSql, summarySql, tableSideSql, type DiffColumn, type DiffShape } from './changeByKeySql.ts';
import { query, type PgClient } from './connect.ts';
import type { TableInfo } from './catalog.ts';
import type { KeyChangeOptions } from '../../executor/types.ts';
import { bisectPartition } from './keyBisection.ts';
import type { ClientPool } from './pool.ts';
import type { TargetShape } from './statements.ts';
import { readOnlyTransaction, userQuery } from './userQuery.ts';

export interface KeyDiffContext {
  job: PostgresJob;
  table: TableInfo;
  /** the columns the job writes, its partition column and key */
  shape: TargetShape;
  sameDatabase: boolean;
  sourcePool: ClientPool;
  targetPool: ClientPool;
}

export type KeyDiffOptions = KeyChangeOptions;

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
  static async guard(job: PostgresJob): Promise<SqlOrigin> {
    const origin: SqlOrigin = { field: 'source.query', where: `job "${job.name}"` };
    await checkReadOnlySelect(job.source.query, origin);
    return origin;
  }

  /** Checks the job's SQL, reads the target's column facts and decides grain, measures and movers. */
  static async prepare(ctx: KeyDiffContext): Promise<KeyDiff> {
    const { job, shape } = ctx;
    const origin = await KeyDiff.guard(job);
    const facts = await withClient(ctx.targetPool, (c) => columnFacts(c, ctx.table));
    const byName = new Map(facts.map((f) => [f.name, f]));
    const comparable = await withClient(ctx.targetPool, (c) => probeEquality(c, [...new Set(facts.map((f) => f.type))]));
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
  async recomputed(partition: Partition, options: KeyDiffOptions = {}): Promise<KeyChange> {
    const { job, table, shape } = this.ctx;
    const params = paramsOf(partition, 'change-by-key');
    const before = tableSideSql(table.quoted, shape, this.diff);
    if (!this.ctx.sameDatabase) {
      return bisectPartition({
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
        base: this.base(partition.key, 'checksum bisection'),
      });
    }
    const after = sourceSideSql(job.source.query, this.diff);
    return withClient(this.ctx.targetPool, (client) =>
      readOnlyTransaction(client, (c) =>
        this.join(partition.key, 'full outer join', after, before, options, (sql, p) =>
          userQuery<Row>(c, sql, { ...params, ...p }, this.origin),
        ),
      ),
    );
  }

  /** The partition now against the run's snapshot of it: what the run changed (after it ran). */
  async againstSnapshot(partition: Partition, runId: string, options: KeyDiffOptions = {}): Promise<KeyChange> {
    const { table, shape } = this.ctx;
    const params = paramsOf(partition, runId);
    return withClient(this.ctx.targetPool, (client) =>
      readOnlyTransaction(client, async (c) => {
        const snapshot = await snapshotTable(c, runId, `${table.schema}.${table.name}`, partition.key);
        const after = tableSideSql(table.quoted, shape, this.diff);
        const before = tableSideSql(snapshot, shape, this.diff);
        return this.join(partition.key, 'against snapshot', after, before, options, (sql, p) => query<Row>(c, sql, { ...params, ...p }));
      }),
    );
  }

  private base(partition: string, method: KeyChangeMethod): KeyChange {
    const names = this.diff.columns.map((c) => c.name);
    return {
      partition,
      method,
      grain: this.diff.grain.map((i) => names[i] as string),
      grainFrom: this.grainFrom,
      columns: names,
      before: 0,
      after: 0,
      added: 0,
      removed: 0,
      changed: 0,
      unchanged: 0,
      columnChanges: {},
      measures: [],
      sample: [],
      sampleLimit: 0,
      movers: [],
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
    options: KeyDiffOptions,
    run: (sql: string, params: Record<string, unknown>) => Promise<{ rows: Row[] }>,
  ): Promise<KeyChange> {
    const { diff } = this;
    const sampleLimit = options.sampleLimit ?? 20;
    const summary = await run(summarySql(after, before, diff), diff.movers.length > 0 ? { top_movers: options.topMovers ?? 20 } : {});
    const all = diff.movers.length === 0 ? 0 : (1 << diff.movers.length) - 1;
    const total = summary.rows.find((r) => Number(r.g) === all) ?? {};
    const result = this.base(partition, method);
    result.sampleLimit = sampleLimit;
    result.before = Number(total.before_rows ?? 0);
    result.after = Number(total.after_rows ?? 0);
    result.added = Number(total.added ?? 0);
    result.removed = Number(total.removed ?? 0);
    result.changed = Number(total.changed ?? 0);
    result.unchanged = result.after - result.added - result.changed;
    diff.columns.forEach((c, i) => {
      if (!diff.grain.includes(i)) result.columnChanges[c.name] = Number(total[`x${i}`] ?? 0);
    });
    result.measures = diff.measures.map((i) => ({
      column: (diff.columns[i] as DiffColumn).name,
      before: text(total[`b${i}`]),
      after: text(total[`a${i}`]),
      net: text(total[`n${i}`]),
      moved: text(total[`m${i}`]),
    }));
    result.movers = summary.rows.filter((r) => Number(r.g) !== all).map((r) => this.mover(r, all));
    if (Number(total.keys ?? 0) > 0 && sampleLimit > 0) {
      const sample = await run(sampleSql(after, before, diff), { sample_limit: sampleLimit });
      result.sample = sortSample(sample.rows.map(sampleRow));
    }
    return result;
  }

  /** A grouping-set row of summarySql: which mover column it groups (its bit is 0 in g), its value and net changes. */
  private mover(r: Row, all: number): KeyMover {
    const { diff } = this;
    const g = Number(r.g);
    const j = diff.movers.findIndex((_, k) => (all & ~g) === 1 << (diff.movers.length - 1 - k));
    const net: Record<string, string> = {};
    for (const i of diff.measures) net[(diff.columns[i] as DiffColumn).name] = text(r[`n${i}`]);
    return {
      column: (diff.columns[diff.movers[j] ?? 0] as DiffColumn).name,
      value: (r[`v${j}`] as string | null) ?? null,
      keys: Number(r.keys ?? 0),
      net,
    };
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

/** Changed keys in key order, so a reader scans them like a table. */
export function sortSample(rows: KeyRowSample[]): KeyRowSample[] {
  return rows.sort((x, y) => JSON.stringify(x.key).localeCompare(JSON.stringify(y.key)));
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

export async function withClient<T>(pool: ClientPool, fn: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.acquire();
  let broken = false;
  try {
    return await fn(client);
  } catch (err) {
    broken = true;
    throw err;
  } finally {
    pool.release(client, broken);
  }
}
