/**
 * A Postgres table as a partition target: DESIGN §6 step by step, one transaction per
 * partition. Same database → `INSERT … SELECT` pushdown; different servers → COPY streamed
 * from a read-only source transaction into the target transaction.
 */
import { pipeline } from 'node:stream/promises';
import type { Partition } from '../../../../shared/partitions.ts';
import type { PostgresConnection, PostgresJob, WriteMode } from '../../../../shared/schemas.ts';
import { InputError } from '../../../../shared/errors.ts';
import { compareMeasures, describeCheck } from '../../executor/compare.ts';
import { AbortedError, PartitionBusyError, PartitionValidationError } from '../../executor/errors.ts';
import type { DryRunRow, Measures, PartitionMark, PartitionTarget, PartitionWriteResult, ReconcileRow, RuleCheck, WriteContext } from '../../executor/types.ts';
import type { PgClient } from './connect.ts';
import { copyFrom, copyTo, query } from './connect.ts';
import { prepareCopySource, setCopyParameters, type CopySource } from './copySource.ts';
import { resolveTable, requireColumns, type TableInfo } from './catalog.ts';
import { classifyPgError, isLockTimeout } from './errors.ts';
import { ensureMarksTable, readMarks, writeMark } from './marks.ts';
import { ClientPool } from './pool.ts';
import * as stmt from './statements.ts';
import { quoteIdent } from './sql.ts';

export interface PostgresEndpoint {
  name: string;
  connection: PostgresConnection;
  password?: string;
}

export interface PostgresTargetOptions {
  job: PostgresJob;
  writeMode: WriteMode;
  source: PostgresEndpoint;
  target: PostgresEndpoint;
}

type Params = Record<string, string>;

export class PostgresPartitionTarget implements PartitionTarget {
  readonly label: string;
  private readonly sameDatabase: boolean;
  private readonly targetPool: ClientPool;
  private readonly sourcePool: ClientPool;
  private table!: TableInfo;
  private shape!: stmt.TargetShape;
  private numeric: string[] = [];
  /** Duplicate keys cannot exist when a unique index covers the key: no need to count them. */
  private keyEnforced = false;
  private copySource: CopySource | undefined;

  constructor(private readonly options: PostgresTargetOptions) {
    const { job, source, target } = options;
    this.label = `${job.target.table} on ${target.name}`;
    this.sameDatabase = source.name === target.name || source.connection.url === target.connection.url;
    const app = backfillApplicationName(job.name);
    this.targetPool = new ClientPool(target.connection, target.password, job.timezone, app);
    this.sourcePool = this.sameDatabase ? this.targetPool : new ClientPool(source.connection, source.password, job.timezone, app);
  }

  /** `mart.mart_order_daily`: the name markers and advisory locks are keyed by. */
  private get tableName(): string {
    return `${this.table.schema}.${this.table.name}`;
  }

  private prepared: Promise<void> | undefined;

  /** Idempotent: the CLI prepares before recording a run, the runner again before writing. */
  prepare(): Promise<void> {
    this.prepared ??= this.resolve();
    return this.prepared;
  }

  private async resolve(): Promise<void> {
    const { job, writeMode } = this.options;
    await this.withClient(this.targetPool, async (client) => {
      this.table = await resolveTable(client, job.target.table, 'target.table');
      requireColumns(this.table, [job.target.partition_column], 'target.partition_column');
      requireColumns(this.table, job.target.key, 'target.key');
      await ensureMarksTable(client, targetRole(this.options.target.connection.url));
    });
    const columns = await this.withClient(this.sourcePool, (client) => sourceColumns(client, job.source.query));
    for (const column of columns) {
      if (!this.table.columns.some((c) => c.name === column)) {
        throw new InputError(
          `the source query returns a column "${column}" that ${this.tableName} does not have (its columns: ${this.table.columns.map((c) => c.name).join(', ')})`,
          { field: 'source.query', value: column, hint: 'alias the source column to a target column name' },
        );
      }
    }
    if (!columns.includes(job.target.partition_column)) {
      throw new InputError(`the source query must return the partition column "${job.target.partition_column}"`, { field: 'source.query' });
    }
    const key = job.target.key;
    this.keyEnforced = key.length > 0 && this.table.uniqueKeys.some((u) => u.length === key.length && u.every((c) => key.includes(c)));
    if (writeMode === 'upsert' && !this.keyEnforced) {
      throw new InputError(`write mode upsert needs a primary key or unique index on (${key.join(', ')}) of ${this.tableName}`, {
        field: 'target.key',
        value: key,
        hint: 'create the unique index, or use overwrite-partition',
      });
    }
    this.shape = { quoted: this.table.quoted, partitionColumn: job.target.partition_column, columns, key };
    this.numeric = columns.filter((c) => c !== job.target.partition_column && !key.includes(c) && this.table.columns.find((t) => t.name === c)?.numeric);
    if (!this.sameDatabase) {
      const selectList = columns.map((c) => `src.${quoteIdent(c)}`).join(', ');
      this.copySource = await this.withClient(this.sourcePool, (client) => prepareCopySource(client, job.source.query, selectList));
    }
  }

  async readMarks(keys: readonly string[]): Promise<Map<string, PartitionMark>> {
    return this.withClient(this.targetPool, (client) => readMarks(client, this.tableName, keys));
  }

  async writePartition(partition: Partition, ctx: WriteContext): Promise<PartitionWriteResult> {
    const params = this.params(partition, ctx.runId);
    const client = await this.targetPool.acquire();
    let broken = false;
    const cancel = (): void => void this.cancelBackend(client);
    ctx.signal.addEventListener('abort', cancel, { once: true });
    try {
      if (ctx.signal.aborted) throw new AbortedError();
      await client.query('BEGIN');
      const lock = await query<{ locked: boolean }>(client, `SELECT pg_try_advisory_xact_lock(hashtextextended(:lock_key, 0)) AS locked`, {
        lock_key: `backfill_runbook:${this.tableName}:${partition.key}`,
      });
      if (!lock.rows[0]?.locked) throw new PartitionBusyError(`partition ${partition.key} of ${this.tableName} is being written by another run`);
      const rowsWritten = await this.writeRows(client, ctx.writeMode, params);
      const result = await this.validateInTransaction(client, partition, ctx, params, rowsWritten);
      ctx.onValidated(result);
      await writeMark(client, this.tableName, {
        partitionKey: partition.key,
        runId: ctx.runId,
        planHash: ctx.planHash,
        attempt: ctx.attempt,
        rowsWritten,
        checksum: result.checksum,
      });
      await client.query('COMMIT');
      return result;
    } catch (err) {
      broken = classifyPgError(err) === 'transient' && !isLockOrSerialization(err);
      if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
      if (ctx.signal.aborted) throw new AbortedError();
      throw err;
    } finally {
      ctx.signal.removeEventListener('abort', cancel);
      this.targetPool.release(client, broken);
    }
  }

  /** Step 2 of the protocol: the partition's rows, in the transaction open on `client`. */
  private async writeRows(client: PgClient, mode: WriteMode, params: Params): Promise<number> {
    if (mode === 'overwrite-partition') await query(client, stmt.deletePartitionSql(this.shape), params);
    return this.sameDatabase ? this.insertPushdown(client, mode, params) : this.insertByCopy(client, mode, params);
  }

  /**
   * Proof of idempotency on real data: the partition's write twice in one transaction that is
   * rolled back, with the partition's checksum after each. Equal checksums: a rerun changes
   * nothing. The target is left exactly as it was.
   */
  async proveIdempotent(partition: Partition, mode: WriteMode): Promise<{ first: string; second: string; rows: [number, number] }> {
    await this.prepare();
    const params = this.params(partition, 'idempotency-proof');
    const client = await this.targetPool.acquire();
    try {
      await client.query('BEGIN');
      const checksum = async (): Promise<string> => (await query<{ md5: string }>(client, stmt.checksumSql(this.shape), params)).rows[0]?.md5 ?? '';
      const firstRows = await this.writeRows(client, mode, params);
      const first = await checksum();
      const secondRows = await this.writeRows(client, mode, params);
      const second = await checksum();
      return { first: `md5:${first}`, second: `md5:${second}`, rows: [firstRows, secondRows] };
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      this.targetPool.release(client);
    }
  }

  async measure(partition: Partition): Promise<DryRunRow> {
    const params = this.params(partition, 'dry-run');
    const source = await this.readOnly(this.sourcePool, (c) => firstRow(c, stmt.measureSourceSql(this.options.job.source.query, this.numeric), params));
    const target = await this.readOnly(this.targetPool, (c) => firstRow(c, stmt.measureTargetSql(this.shape, this.numeric), params));
    const change: Measures = {};
    for (const k of Object.keys(source)) change[k] = roundDiff(Number(source[k] ?? 0) - Number(target[k] ?? 0));
    return { partition, source, target, change };
  }

  async reconcile(partition: Partition): Promise<ReconcileRow> {
    const params = this.params(partition, 'reconcile');
    const checks = await this.runRules(params);
    const target = await this.readOnly(this.targetPool, (c) => firstRow(c, stmt.measureTargetSql(this.shape, this.numeric), params));
    const mark = (await this.readMarks([partition.key])).get(partition.key);
    const targetCount = Number(target.rows);
    const duplicateKeys =
      this.shape.key.length > 0 && !this.keyEnforced ? Number((await this.readOnly(this.targetPool, (c) => firstRow(c, stmt.duplicateKeysSql(this.shape), params))).duplicates) : 0;
    const problems = checks.filter((c) => !c.ok).map(describeCheck);
    if (duplicateKeys > 0) problems.push(`${duplicateKeys} duplicate key(s) on (${this.shape.key.join(', ')})`);
    if (!mark) problems.push('no marker row: the partition was never published');
    else if (this.options.writeMode === 'overwrite-partition' && mark.rowsWritten !== targetCount) {
      problems.push(`target holds ${targetCount} rows but ${mark.rowsWritten} were published by ${mark.runId}`);
    }
    return { partition, checks, targetCount, markedRows: mark?.rowsWritten ?? null, markRunId: mark?.runId ?? null, duplicateKeys, ok: problems.length === 0, problems };
  }

  isTransient(err: unknown): boolean {
    return classifyPgError(err) === 'transient';
  }

  isLockWait(err: unknown): boolean {
    return isLockTimeout(err);
  }

  async close(): Promise<void> {
    await this.targetPool.closeAll();
    if (!this.sameDatabase) await this.sourcePool.closeAll();
  }

  private params(partition: Partition, runId: string): Params {
    return { partition_start: partition.start, partition_end: partition.end, run_id: runId };
  }

  private async insertPushdown(client: PgClient, mode: WriteMode, params: Params): Promise<number> {
    const sql = stmt.insertSql(mode, this.shape, stmt.sourceAsTable(this.options.job.source.query));
    const r = await query(client, sql, params);
    return r.rowCount ?? 0;
  }

  /** Streams the source partition into the target (or a staging table for upsert/dedupe). */
  private async insertByCopy(client: PgClient, mode: WriteMode, params: Params): Promise<number> {
    const copySource = this.copySource;
    if (!copySource) throw new Error('prepare() must run before writing partitions');
    const staged = mode !== 'overwrite-partition';
    if (staged) {
      await client.query('DROP TABLE IF EXISTS pg_temp.bf_stage'); // a second write in one transaction (idempotency proof)
      await client.query(stmt.createStagingSql(this.shape));
    }
    const into = staged ? 'pg_temp.bf_stage' : this.shape.quoted;
    const source = await this.sourcePool.acquire();
    let sourceBroken = false;
    try {
      await source.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      await setCopyParameters(source, copySource, params);
      const reader = copyTo(source, copySource.copySql);
      const writer = copyFrom(client, stmt.copyIntoSql(into, this.shape.columns));
      await pipeline(reader, writer);
      await source.query('COMMIT');
      if (!staged) return writer.rowCount;
    } catch (err) {
      sourceBroken = true; // a half-read COPY leaves the connection in an unknown state
      throw err;
    } finally {
      this.sourcePool.release(source, sourceBroken);
    }
    const r = await client.query(stmt.insertSql(mode, this.shape, 'pg_temp.bf_stage AS src'));
    return r.rowCount ?? 0;
  }

  private async validateInTransaction(client: PgClient, partition: Partition, ctx: WriteContext, params: Params, rowsWritten: number): Promise<PartitionWriteResult> {
    const checks = await this.runRules(params, client);
    const duplicateKeys =
      this.shape.key.length > 0 && !this.keyEnforced ? Number((await firstRow(client, stmt.duplicateKeysSql(this.shape), params)).duplicates) : 0;
    const { __checksum: md5, ...target } = await this.measureWithChecksum(client, params);
    const targetCount = Number(target.rows);
    const problems = checks.filter((c) => !c.ok).map(describeCheck);
    if (duplicateKeys > 0) problems.push(`${duplicateKeys} duplicate key(s) on (${this.shape.key.join(', ')}) in partition ${partition.key}`);
    if (ctx.writeMode === 'overwrite-partition' && targetCount !== rowsWritten) {
      problems.push(`wrote ${rowsWritten} rows but the partition holds ${targetCount}: rows outside the source's partition filter?`);
    }
    if (problems.length > 0) throw new PartitionValidationError(`partition ${partition.key} did not validate, rolled back: ${problems.join('; ')}`, checks);
    const checksum = `${this.checksumKind === 'record' ? 'h64' : 'md5'}:${String(md5 ?? '')}`;
    const first = checks[0];
    return {
      rowsWritten,
      sourceCount: first && 'rows' in first.source ? Number(first.source.rows) : null,
      sourceSums: first?.source ?? {},
      targetCount,
      targetSums: target,
      checksum,
      checks,
      duplicateKeys,
    };
  }

  private checksumKind: stmt.ChecksumKind = 'record';

  /** Counts, sums and checksum of the partition in one scan; falls back to the text checksum once. */
  private async measureWithChecksum(client: PgClient, params: Params): Promise<Measures> {
    if (this.checksumKind === 'text') return firstRow(client, stmt.measureAndChecksumSql(this.shape, this.numeric, 'text'), params);
    await client.query('SAVEPOINT bf_checksum');
    try {
      const row = await firstRow(client, stmt.measureAndChecksumSql(this.shape, this.numeric, 'record'), params);
      await client.query('RELEASE SAVEPOINT bf_checksum');
      return row;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== '42883' && code !== '0A000') throw err;
      // A column type without an extended hash function: hash the rows' text instead.
      await client.query('ROLLBACK TO SAVEPOINT bf_checksum');
      this.checksumKind = 'text';
      return firstRow(client, stmt.measureAndChecksumSql(this.shape, this.numeric, 'text'), params);
    }
  }

  /** Each validation rule: source side read-only on the source, target side on `inTx` (or read-only). */
  private async runRules(params: Params, inTx?: PgClient): Promise<RuleCheck[]> {
    const checks: RuleCheck[] = [];
    for (const rule of this.options.job.validation) {
      const source = this.sameDatabase && inTx ? await firstRow(inTx, rule.source, params) : await this.readOnly(this.sourcePool, (c) => firstRow(c, rule.source, params));
      const target = inTx ? await firstRow(inTx, rule.target, params) : await this.readOnly(this.targetPool, (c) => firstRow(c, rule.target, params));
      checks.push(compareMeasures(rule.name, source, target, rule.tolerance));
    }
    return checks;
  }

  private async readOnly<T>(pool: ClientPool, fn: (client: PgClient) => Promise<T>): Promise<T> {
    return this.withClient(pool, async (client) => {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      try {
        return await fn(client);
      } finally {
        await client.query('ROLLBACK');
      }
    });
  }

  private async withClient<T>(pool: ClientPool, fn: (client: PgClient) => Promise<T>): Promise<T> {
    const client = await pool.acquire();
    let broken = false;
    try {
      return await fn(client);
    } catch (err) {
      broken = classifyPgError(err) === 'transient';
      throw err;
    } finally {
      pool.release(client, broken);
    }
  }

  /** Cancels the statement running on `client` from another connection; its transaction rolls back. */
  private async cancelBackend(client: PgClient): Promise<void> {
    const pid = (client as unknown as { processID?: number }).processID;
    if (!pid) return;
    await this.withClient(this.targetPool, (c) => query(c, 'SELECT pg_cancel_backend(:pid)', { pid })).catch(() => undefined);
  }
}

/** application_name of the executor's sessions: lock-wait monitoring finds them by it. */
export function backfillApplicationName(jobName: string): string {
  return `backfill-runbook:${jobName}`.slice(0, 63);
}

function isLockOrSerialization(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '55P03' || code === '40001' || code === '40P01';
}

async function firstRow(client: PgClient, sql: string, params: Params): Promise<Measures> {
  const r = await query<Measures>(client, sql, params);
  return r.rows[0] ?? {};
}

/** Column names the source query returns, asked of the server without running it for real. */
async function sourceColumns(client: PgClient, sourceQuery: string): Promise<string[]> {
  const probe = `SELECT * FROM ${stmt.sourceAsTable(sourceQuery)} LIMIT 0`;
  const r = await query(client, probe, { partition_start: '1970-01-01T00:00:00+00:00', partition_end: '1970-01-02T00:00:00+00:00', run_id: 'probe' });
  return r.fields.map((f) => f.name);
}

function targetRole(url: string): string {
  try {
    return decodeURIComponent(new URL(url).username) || 'backfill';
  } catch {
    return 'backfill';
  }
}

function roundDiff(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
