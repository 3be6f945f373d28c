/**
 * A Postgres table fed by the JSON Lines objects of an S3 partition: docs/design.md §6 with COPY from
 * S3 in place of the source query. One transaction per partition: the records are COPYed into
 * a temporary jsonb table, turned into rows by jsonb_populate_record (JSON keys name columns;
 * keys the table lacks are ignored, columns no record names keep their defaults), written in
 * the job's mode, validated, marked and committed — or rolled back whole.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Partition } from '../../../../shared/partitions.ts';
import type { Job, PostgresTarget, WriteMode } from '../../../../shared/schemas.ts';
import { InputError } from '../../../../shared/errors.ts';
import { compareMeasures, describeCheck } from '../../executor/compare.ts';
import { AbortedError, PartitionBusyError, PartitionValidationError } from '../../executor/errors.ts';
import type {
  DryRunRow,
  Measures,
  PartitionMark,
  PartitionTarget,
  PartitionWriteResult,
  ReconcileRow,
  RuleCheck,
  WriteContext,
} from '../../executor/types.ts';
import { resolveTable, requireColumns, type TableInfo } from '../postgres/catalog.ts';
import type { PgClient } from '../postgres/connect.ts';
import { copyFrom, query } from '../postgres/connect.ts';
import { classifyPgError, isLockTimeout } from '../postgres/errors.ts';
import { ensureMarksTable, readMarks, writeMark } from '../postgres/marks.ts';
import type { ClientPool } from '../postgres/pool.ts';
import * as stmt from '../postgres/statements.ts';
import { readOnlySavepoint, userFirstRow } from '../postgres/userQuery.ts';
import { checkReadOnlySelect } from '../../sql/readOnlySelect.ts';
import { isTransientS3Error } from './errors.ts';
import { params } from './pgJsonSource.ts';
import type { RecordBlock } from './records.ts';
import type { S3RecordSource } from './sources.ts';

export interface S3ToPostgresOptions {
  job: Job;
  spec: PostgresTarget;
  writeMode: WriteMode;
  pool: ClientPool;
  source: S3RecordSource;
  role: string;
  targetName: string;
}

export class S3ToPostgresTarget implements PartitionTarget {
  readonly label: string;
  private table!: TableInfo;
  private keyEnforced = false;
  private prepared: Promise<void> | undefined;

  constructor(private readonly options: S3ToPostgresOptions) {
    this.label = `${options.spec.table} on ${options.targetName}`;
  }

  private get tableName(): string {
    return `${this.table.schema}.${this.table.name}`;
  }

  prepare(): Promise<void> {
    this.prepared ??= (async () => {
      const { spec, writeMode, job } = this.options;
      // Every Postgres side of a rule is one read-only SELECT, checked before any server sees it.
      for (const [i, rule] of job.validation.entries()) await checkReadOnlySelect(rule.target, this.origin(`validation[${i}].target`));
      // Only reads here: a dry run leaves nothing on the target (the marker table waits for the first write).
      await this.options.pool.read(async (client) => {
        this.table = await resolveTable(client, spec.table, 'target.table');
        requireColumns(this.table, [spec.partition_column], 'target.partition_column');
        requireColumns(this.table, spec.key, 'target.key');
      });
      const key = spec.key;
      this.keyEnforced = key.length > 0 && this.table.uniqueKeys.some((u) => u.length === key.length && u.every((c) => key.includes(c)));
      if (writeMode === 'upsert' && !this.keyEnforced) {
        throw new InputError(`write mode upsert needs a primary key or unique index on (${key.join(', ')}) of ${this.tableName}`, {
          field: 'target.key',
          value: key,
        });
      }
      await this.options.source.prepare();
    })();
    return this.prepared;
  }

  /** The shape of this partition's insert: the table's columns that its records name. */
  private shapeFor(columns: readonly string[]): stmt.TargetShape {
    return { quoted: this.table.quoted, partitionColumn: this.options.spec.partition_column, columns, key: this.options.spec.key };
  }

  private numeric(): string[] {
    const { spec } = this.options;
    return this.table.columns.filter((c) => c.numeric && c.name !== spec.partition_column && !spec.key.includes(c.name)).map((c) => c.name);
  }

  private origin(field: string): { field: string; where: string } {
    return { field, where: `job "${this.options.job.name}"` };
  }

  private marksReady: Promise<void> | undefined;

  async readMarks(keys: readonly string[]): Promise<Map<string, PartitionMark>> {
    return this.options.pool.use((client) => readMarks(client, this.tableName, keys));
  }

  async writePartition(partition: Partition, ctx: WriteContext): Promise<PartitionWriteResult> {
    this.marksReady ??= this.options.pool.use((c) => ensureMarksTable(c, this.options.role));
    await this.marksReady;
    const p = params(partition, ctx.runId);
    const client = await this.options.pool.acquire();
    let broken = false;
    try {
      if (ctx.signal.aborted) throw new AbortedError();
      await client.query('BEGIN');
      const lock = await query<{ locked: boolean }>(client, `SELECT pg_try_advisory_xact_lock(hashtextextended(:lock_key, 0)) AS locked`, {
        lock_key: `backfill_runbook:${this.tableName}:${partition.key}`,
      });
      if (!lock.rows[0]?.locked)
        throw new PartitionBusyError(`partition ${partition.key} of ${this.tableName} is being written by another run`);
      await client.query('CREATE TEMP TABLE bf_json (doc jsonb NOT NULL) ON COMMIT DROP');
      const stream = await this.options.source.open(partition, ctx.signal);
      await pipeline(Readable.from(copyText(stream.records)), copyFrom(client, 'COPY pg_temp.bf_json (doc) FROM STDIN'));
      const counts = stream.counts();
      const named = await query<{ k: string }>(
        client,
        "SELECT DISTINCT jsonb_object_keys(doc) AS k FROM pg_temp.bf_json WHERE jsonb_typeof(doc) = 'object'",
      );
      const keys = new Set(named.rows.map((r) => r.k));
      const columns = this.table.columns.map((c) => c.name).filter((c) => keys.has(c));
      const shape = this.shapeFor(columns);
      if (counts.records > 0 && !columns.includes(shape.partitionColumn)) {
        throw new PartitionValidationError(
          `partition ${partition.key}: no record has the partition column "${shape.partitionColumn}" (records name: ${[...keys].slice(0, 10).join(', ')})`,
        );
      }
      if (ctx.writeMode === 'overwrite-partition') await query(client, stmt.deletePartitionSql(shape), p);
      let rowsWritten = 0;
      if (counts.records > 0) {
        const from = `(SELECT r.* FROM pg_temp.bf_json AS j CROSS JOIN LATERAL jsonb_populate_record(NULL::${this.table.quoted}, ${this.docOf(columns)}) AS r) AS src`;
        rowsWritten = (await query(client, stmt.insertSql(ctx.writeMode, shape, from), p)).rowCount;
      }
      const result = await this.validateInTransaction(client, partition, ctx, shape, rowsWritten, counts.records);
      ctx.onValidated(result);
      await writeMark(client, this.tableName, {
        partitionKey: partition.key,
        runId: ctx.runId,
        planHash: ctx.planHash,
        attempt: ctx.attempt,
        rowsWritten,
        checksum: result.checksum,
      });
      if (ctx.signal.aborted) throw new AbortedError();
      await client.query('COMMIT');
      return result;
    } catch (err) {
      broken = classifyPgError(err) === 'transient';
      if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
      if (ctx.signal.aborted) throw new AbortedError();
      throw err;
    } finally {
      this.options.pool.release(client, broken);
    }
  }

  /**
   * The record as jsonb_populate_record reads it. CSV carries text only: a json or jsonb
   * column's text is parsed as JSON (else the column would hold a JSON string, not the
   * document); every other type is cast from its text by jsonb_populate_record itself.
   */
  private docOf(columns: readonly string[]): string {
    if (this.options.source.encoding.format !== 'csv') return 'j.doc';
    const docs = this.table.columns.filter((c) => columns.includes(c.name) && /^jsonb?$/.test(c.type));
    if (docs.length === 0) return 'j.doc';
    const parsed = docs.map((c) => `${literalOf(c.name)}, CAST(j.doc ->> ${literalOf(c.name)} AS jsonb)`).join(', ');
    return `(j.doc || jsonb_build_object(${parsed}))`;
  }

  private async validateInTransaction(
    client: PgClient,
    partition: Partition,
    ctx: WriteContext,
    shape: stmt.TargetShape,
    rowsWritten: number,
    records: number,
  ): Promise<PartitionWriteResult> {
    const p = params(partition, ctx.runId);
    const target = (await query<Measures>(client, stmt.measureTargetSql(shape, this.numeric()), p)).rows[0] ?? {};
    const targetCount = Number(target.rows ?? 0);
    const checks = await this.runRules(partition, client);
    const problems = checks.filter((c) => !c.ok).map(describeCheck);
    const { key } = this.options.spec;
    const duplicateKeys =
      key.length > 0 && !this.keyEnforced
        ? Number((await query<{ duplicates: string }>(client, stmt.duplicateKeysSql(shape), p)).rows[0]?.duplicates ?? 0)
        : 0;
    if (duplicateKeys > 0) problems.push(`${duplicateKeys} duplicate key(s) on (${key.join(', ')}) in partition ${partition.key}`);
    if (ctx.writeMode === 'overwrite-partition') {
      if (rowsWritten !== records) problems.push(`read ${records} records but wrote ${rowsWritten} rows`);
      if (targetCount !== rowsWritten)
        problems.push(`wrote ${rowsWritten} rows but the partition holds ${targetCount}: records outside partition ${partition.key}?`);
    }
    if (problems.length > 0)
      throw new PartitionValidationError(`partition ${partition.key} did not validate, rolled back: ${problems.join('; ')}`, checks);
    const sum = await query<{ md5: string }>(client, stmt.checksumSql(shape), p);
    const first = checks[0];
    return {
      rowsWritten,
      sourceCount: records,
      sourceSums: first?.source ?? { records },
      targetCount,
      targetSums: target,
      checksum: `md5:${sum.rows[0]?.md5 ?? ''}`,
      checks,
      duplicateKeys,
    };
  }

  /** S3 side: records read; Postgres side: the rule's SQL, in the partition's transaction when given. */
  private async runRules(partition: Partition, inTx?: PgClient): Promise<RuleCheck[]> {
    const checks: RuleCheck[] = [];
    for (const [i, rule] of this.options.job.validation.entries()) {
      const source = await this.options.source.ruleMeasures(rule.source, partition, `validation[${i}].source`);
      const p = params(partition, 'validate');
      const origin = this.origin(`validation[${i}].target`);
      // In the write, a READ ONLY savepoint: the rule reads the uncommitted partition, and can change nothing.
      const target = (
        inTx
          ? await readOnlySavepoint(inTx, (c) => userFirstRow(c, rule.target, p, origin))
          : await this.options.pool.read((c) => userFirstRow(c, rule.target, p, origin))
      ) as Measures;
      checks.push(compareMeasures(rule.name, source, target, rule.tolerance));
    }
    return checks;
  }

  async measure(partition: Partition): Promise<DryRunRow> {
    const source = await this.options.source.measure(partition);
    const shape = this.shapeFor([]);
    const target = await this.readOnly((c) =>
      query<Measures>(c, stmt.measureTargetSql(shape, this.numeric()), params(partition)).then((r) => r.rows[0] ?? {}),
    );
    const rows = Number(target.rows ?? 0);
    return {
      partition,
      source: { objects: source.objects, bytes: source.bytes, records: source.records },
      target: { ...target, records: rows },
      change: { rows: source.records - rows, records: source.records - rows },
    };
  }

  async reconcile(partition: Partition): Promise<ReconcileRow> {
    const checks = await this.runRules(partition);
    const target = await this.readOnly((c) =>
      query<Measures>(c, stmt.measureTargetSql(this.shapeFor([]), []), params(partition)).then((r) => r.rows[0] ?? {}),
    );
    const targetCount = Number(target.rows ?? 0);
    const mark = (await this.readMarks([partition.key])).get(partition.key);
    const problems = checks.filter((c) => !c.ok).map(describeCheck);
    if (!mark) problems.push('no marker row: the partition was never published');
    else if (this.options.writeMode === 'overwrite-partition') {
      if (mark.rowsWritten !== targetCount)
        problems.push(`target holds ${targetCount} rows but ${mark.rowsWritten} were published by ${mark.runId}`);
      const source = await this.options.source.measure(partition);
      if (source.records !== targetCount) problems.push(`the source holds ${source.records} records, the target ${targetCount} rows`);
    }
    return {
      partition,
      checks,
      targetCount,
      markedRows: mark?.rowsWritten ?? null,
      markRunId: mark?.runId ?? null,
      ok: problems.length === 0,
      problems,
    };
  }

  isTransient(err: unknown): boolean {
    return classifyPgError(err) === 'transient' || isTransientS3Error(err);
  }

  isLockWait(err: unknown): boolean {
    return isLockTimeout(err);
  }

  async close(): Promise<void> {
    await this.options.pool.closeAll();
    await this.options.source.close();
  }

  private readOnly<T>(fn: (client: PgClient) => Promise<T>): Promise<T> {
    return this.options.pool.read(fn);
  }
}

/**
 * JSON Lines as COPY text rows of one jsonb column: a backslash is COPY's escape character,
 * and a tab (legal between JSON tokens) its column separator, so both are escaped.
 */
async function* copyText(records: AsyncIterable<RecordBlock>): AsyncGenerator<string> {
  // a record holds no newline: each of the block's lines stays one COPY row
  for await (const block of records) yield block.data.toString().replaceAll('\\', '\\\\').replaceAll('\t', '\\t').replaceAll('\r', '\\r');
}

/** A column name as a SQL string literal (names come from the catalog, not the user). */
function literalOf(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
