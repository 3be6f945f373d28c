/**
 * A Postgres table as a partition target: docs/design.md §6 step by step, one transaction per
 * partition. Same database → `INSERT … SELECT` pushdown; different servers → COPY streamed
 * from a read-only source transaction into the target transaction.
 *
 * The source side of the validation rules never waits in line behind the write: on the
 * pushdown path it is read on a second connection inside the write transaction's exported
 * snapshot while the rows are written; on the COPY path it is read in the COPY's own source
 * transaction while the target measures itself. Either way it sees exactly the source data the
 * write read, and it is compared before COMMIT.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Partition } from '../../../../shared/partitions.ts';
import type { PostgresConnection, PostgresJob, WriteMode } from '../../../../shared/schemas.ts';
import { InputError } from '../../../../shared/errors.ts';
import { compareMeasures, describeCheck } from '../../executor/compare.ts';
import { AbortedError, CommitOutcomeUnknownError, PartitionBusyError, PartitionValidationError } from '../../executor/errors.ts';
import type { KeyChange } from '../../../../shared/keyChange.ts';
import type {
  DryRunRow,
  KeyChangeOptions,
  Measures,
  PartitionMark,
  PartitionTarget,
  PartitionWriteResult,
  ReconcileRow,
  RuleCheck,
  WriteContext,
} from '../../executor/types.ts';
import type { PgClient, QueryField } from './connect.ts';
import { answered, copyFrom, copyTo, pipelined, query, type Answer } from './connect.ts';
import { binaryCopyFits, prepareCopySource, setCopyParameters, type CopySource } from './copySource.ts';
import { PartitionSessions } from './partitionSessions.ts';
import { resolveTable, requireColumns, storesRowsAsRead, type TableInfo } from './catalog.ts';
import { classifyPgError, isLockTimeout } from './errors.ts';
import { ensureMarksTable, markFromMeasuresSql, markStatement, readMarks } from './marks.ts';
import { KeyDiff } from './changeByKey.ts';
import { ClientPool } from './pool.ts';
import * as stmt from './statements.ts';
import { quoteIdent } from './sql.ts';
import { checkReadOnlySelect } from '../../sql/readOnlySelect.ts';
import { readOnlySavepoint, refuseVolatileFunctions, userFirstRow, userSqlError, type SqlOrigin } from './userQuery.ts';

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
  /**
   * Always read each written partition back for its measures and checksum, even where they
   * could be computed from the source rows (see fingerprintFrom). For comparing the two.
   */
  scanTarget?: boolean;
}

type Params = Record<string, string>;

/** A source session in its read-only transaction, its COPY … TO STDOUT under way. */
interface OpenSource {
  source: PgClient;
  reader: Readable;
}

/** What is read from the source beside the write, in its snapshot. */
interface SourceSide {
  /** The source side of each validation rule, in order. */
  rules: Measures[];
  /** The partition's measures and checksum computed from the rows read (see fingerprintFrom). */
  fingerprint?: Measures;
}

/** Step 2's outcome: the rows written, and the source side (maybe still being read). */
interface Written {
  rowsWritten: number;
  sourceSide: Promise<SourceSide>;
}

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
  /**
   * Where the partition's measures and checksum (marker, ledger) come from after a write:
   * `target scan` reads the written partition back inside the transaction; `source rows`
   * computes them from the rows the INSERT read, beside the write in the same snapshot — only
   * for an overwrite pushed down into a table that provably stores those rows unchanged
   * (storesRowsAsRead), where both give the same values by construction. The job's own rules
   * still read the target back in the transaction, and reconcile() compares every marker's
   * checksum with a fresh scan of the target after the run. `why` says why a target scan is
   * needed, when it is. Decided in prepare().
   */
  private fingerprint: { from: 'target scan' | 'source rows'; why: string } = { from: 'target scan', why: '' };

  get fingerprintFrom(): 'target scan' | 'source rows' {
    return this.fingerprint.from;
  }

  get fingerprintWhy(): string {
    return this.fingerprint.why;
  }

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

  /**
   * Reads only — the catalog, and the job's SQL described by the server in READ ONLY
   * transactions — so a dry run leaves nothing behind on the target, not even the marker
   * schema (that is made on the first write: ensureMarks).
   */
  private async resolve(): Promise<void> {
    const { job, writeMode } = this.options;
    // Before any of it reaches a server: every SQL text of the job is one read-only SELECT.
    const source = await checkReadOnlySelect(job.source.query, this.origin('source.query'));
    for (const [i, rule] of job.validation.entries()) {
      await checkReadOnlySelect(rule.source, this.origin(`validation[${i}].source`));
      await checkReadOnlySelect(rule.target, this.origin(`validation[${i}].target`));
    }
    await this.targetPool.read(async (client) => {
      this.table = await resolveTable(client, job.target.table, 'target.table');
      requireColumns(this.table, [job.target.partition_column], 'target.partition_column');
      requireColumns(this.table, job.target.key, 'target.key');
      this.checksumKind = (await recordHashWorks(client, this.table.quoted)) ? 'record' : 'text';
    });
    const fields = await this.sourcePool.read(async (client) => {
      // The source query runs inside the write transaction: no function of the server's that could write.
      await refuseVolatileFunctions(client, source.functions, this.origin('source.query'));
      return sourceColumns(client, job.source.query, this.origin('source.query'));
    });
    // Each rule described by its own server, so a typo is exit 2 now, not a failed partition later.
    for (const [i, rule] of job.validation.entries()) {
      await this.sourcePool.read((c) => describeRule(c, rule.source, this.origin(`validation[${i}].source`)));
      await this.targetPool.read((c) => describeRule(c, rule.target, this.origin(`validation[${i}].target`)));
    }
    const columns = fields.map((f) => f.name);
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
    this.numeric = columns.filter(
      (c) => c !== job.target.partition_column && !key.includes(c) && this.table.columns.find((t) => t.name === c)?.numeric,
    );
    await this.chooseFingerprint(fields);
    if (!this.sameDatabase) {
      const selectList = columns.map((c) => `src.${quoteIdent(c)}`).join(', ');
      const binary = await this.sourcePool.use((s) => this.targetPool.use((t) => binaryCopyFits(s, t, this.table.quoted, fields)));
      this.copySource = await this.sourcePool.read((client) => prepareCopySource(client, job.source.query, selectList, binary));
    }
  }

  /** Where a SQL text of this job came from, for its errors. */
  private origin(field: string): SqlOrigin {
    return { field, where: `job "${this.options.job.name}"` };
  }

  private marksReady: Promise<void> | undefined;

  /** The marker table, made (or its one-time setup explained) before the first write only. */
  private ensureMarks(): Promise<void> {
    this.marksReady ??= this.targetPool.use((client) => ensureMarksTable(client, targetRole(this.options.target.connection.url)));
    return this.marksReady;
  }

  private async chooseFingerprint(fields: readonly QueryField[]): Promise<void> {
    const why = await this.whyReadBack(fields);
    this.fingerprint = { from: why === '' ? 'source rows' : 'target scan', why };
  }

  /** Why the written partition must be read back for its fingerprint; '' when it need not. */
  private async whyReadBack(fields: readonly QueryField[]): Promise<string> {
    const { scanTarget, writeMode } = this.options;
    if (scanTarget) return 'asked to read the target back';
    if (!this.sameDatabase) return 'source and target are different servers';
    if (writeMode !== 'overwrite-partition') return `write mode ${writeMode} keeps rows the source did not give`;
    if (this.shape.key.length > 0 && !this.keyEnforced) return 'duplicate keys must be counted in the target';
    const verdict = await this.targetPool.read((client) => storesRowsAsRead(client, this.table, fields));
    return verdict.ok ? '' : verdict.reason;
  }

  async readMarks(keys: readonly string[]): Promise<Map<string, PartitionMark>> {
    return this.targetPool.use((client) => readMarks(client, this.tableName, keys));
  }

  async writePartition(partition: Partition, ctx: WriteContext): Promise<PartitionWriteResult> {
    await this.ensureMarks();
    const params = this.params(partition, ctx.runId);
    const sessions = new PartitionSessions(ctx.signal);
    const client = await sessions.open(this.targetPool);
    let broken = false;
    try {
      if (ctx.signal.aborted) throw new AbortedError();
      // Across servers the source opens (and starts its COPY) while the target locks and deletes.
      const source = this.sameDatabase ? undefined : this.openCopySource(sessions, params);
      // Step 1 and the transaction's start in one round trip. The server runs them in order, so
      // the lock is held before the transaction takes its snapshot; not got, nothing is written.
      const [lock, begun] = answered(
        await pipelined(client, [
          { sql: stmt.LOCK_PARTITION_SQL, params: { lock_key: `backfill_runbook:${this.tableName}:${partition.key}` } },
          { sql: this.sameDatabase ? stmt.beginWriteSql(this.exportsSnapshot) : 'BEGIN' },
        ]),
      );
      if (lock?.results[0]?.rows[0]?.locked !== true)
        throw new PartitionBusyError(`partition ${partition.key} of ${this.tableName} is being written by another run`);
      const written = source
        ? await this.writeByCopy(client, sessions, ctx.writeMode, params, source)
        : await this.writePushdown(client, sessions, ctx.writeMode, params, exportedSnapshot(begun));
      // Step 3: nothing commits unless every check passed and the ledger says `validated`.
      const { result, mark } = await this.validateInTransaction(client, partition, ctx, params, written);
      ctx.onValidated(result);
      // Committing: a stop-now from here on lets the COMMIT finish rather than cut it short.
      sessions.detachAbort();
      await this.commit(client, partition, mark);
      return result;
    } catch (err) {
      await sessions.cancelAll(client); // the source side may still be reading
      if (sessions.committing) {
        // Whether the COMMIT took effect is not known here (a late cancel can land on the unlock
        // sent behind a COMMIT that succeeded). Ending the session drops the lock and anything
        // left open; the runner asks the target's marker.
        broken = true;
        throw new CommitOutcomeUnknownError(partition.key, err);
      }
      broken = classifyPgError(err) === 'transient' && !isLockOrSerialization(err);
      if (!broken) await client.query(stmt.ROLLBACK_AND_UNLOCK_SQL).catch(() => (broken = true));
      if (ctx.signal.aborted) throw new AbortedError();
      throw err;
    } finally {
      sessions.release(client, broken);
      await sessions.settle();
    }
  }

  /**
   * Step 4 and the COMMIT, in one round trip; the partition lock is dropped in it too (not if
   * the COMMIT fails), so the session is free at once and the next partition writes on this
   * same warm backend. `mark` is the marker row still to write (see validateInTransaction): it
   * goes first, and a marker the server refuses aborts the transaction, so the COMMIT behind it
   * rolls back — checked, as is a COMMIT that answers anything but COMMIT.
   */
  private async commit(client: PgClient, partition: Partition, mark: Omit<PartitionMark, 'publishedAt'> | undefined): Promise<void> {
    const statements = [...(mark ? [markStatement(this.tableName, mark)] : []), { sql: stmt.COMMIT_AND_UNLOCK_SQL }];
    const settled = await pipelined(client, statements);
    const committed = settled[settled.length - 1];
    const tag = committed?.status === 'fulfilled' ? committed.value.results[0]?.command : undefined;
    const refused = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (refused && tag === 'COMMIT') {
      throw new Error(`partition ${partition.key} was committed without its marker row (${String(refused.reason)}): run it again`, {
        cause: refused.reason,
      });
    }
    answered(settled);
    if (tag !== 'COMMIT') throw new Error(`the COMMIT of partition ${partition.key} answered ${tag ?? 'nothing'}: rolled back`);
  }

  /**
   * In the transaction writePartition began: REPEATABLE READ, so every statement of the write
   * reads one snapshot. `snapshot` is its exported id (see exportsSnapshot): the source side is
   * then read beside the write, in exactly that data (docs/design.md §6 step 3).
   */
  private async writePushdown(
    client: PgClient,
    sessions: PartitionSessions,
    mode: WriteMode,
    params: Params,
    snapshot: string | undefined,
  ): Promise<Written> {
    const fingerprint = this.fingerprintFrom === 'source rows';
    if (mode === 'overwrite-partition') await query(client, stmt.deletePartitionSql(this.shape), params);
    // The source side starts once the DELETE is done: beside it, both would compete for the
    // same cores to no gain — the snapshot was fixed at BEGIN, so it reads the same data anyway.
    const sourceSide = snapshot
      ? sessions.beside(this.sourcePool, async (reader): Promise<SourceSide> => {
          await reader.query(stmt.beginInSnapshotSql(snapshot)); // READ ONLY, in the write's snapshot
          const rules = await this.sourceMeasures(reader, params);
          const side: SourceSide = fingerprint
            ? { rules, fingerprint: await firstRow(reader, this.sourceFingerprintSql(), params) }
            : { rules };
          await reader.query('ROLLBACK');
          return side;
        })
      : Promise.resolve({ rules: [] });
    return { rowsWritten: await this.insertPushdown(client, mode, params), sourceSide };
  }

  /** The pushdown's snapshot is exported when something is read beside the write. */
  private get exportsSnapshot(): boolean {
    return this.options.job.validation.length > 0 || this.fingerprintFrom === 'source rows';
  }

  private sourceFingerprintSql(): string {
    return stmt.sourceFingerprintSql(
      this.options.job.source.query,
      this.shape,
      this.table.columns.map((c) => c.name),
      this.numeric,
      this.checksumKind,
    );
  }

  /** The target transaction in READ COMMITTED; the source side is read in the COPY's transaction. */
  private async writeByCopy(
    client: PgClient,
    sessions: PartitionSessions,
    mode: WriteMode,
    params: Params,
    source: Promise<OpenSource>,
  ): Promise<Written> {
    let sourceSide: Promise<SourceSide> = Promise.resolve({ rules: [] });
    const onSourceSide = (side: Promise<Measures[]>): void => {
      sourceSide = side.then((rules) => ({ rules }));
    };
    const rowsWritten = await this.insertByCopy(client, sessions, mode, params, onSourceSide, source);
    return { rowsWritten, sourceSide };
  }

  /** Step 2 of the protocol: the partition's rows, in the transaction open on `client`. */
  private async writeRows(client: PgClient, sessions: PartitionSessions, mode: WriteMode, params: Params): Promise<number> {
    if (this.sameDatabase) {
      if (mode === 'overwrite-partition') await query(client, stmt.deletePartitionSql(this.shape), params);
      return this.insertPushdown(client, mode, params);
    }
    return this.insertByCopy(client, sessions, mode, params);
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
      const checksum = async (): Promise<string> =>
        (await query<{ md5: string }>(client, stmt.checksumSql(this.shape), params)).rows[0]?.md5 ?? '';
      const sessions = new PartitionSessions();
      const firstRows = await this.writeRows(client, sessions, mode, params).finally(() => sessions.settle());
      const first = await checksum();
      const secondRows = await this.writeRows(client, sessions, mode, params).finally(() => sessions.settle());
      const second = await checksum();
      return { first: `md5:${first}`, second: `md5:${second}`, rows: [firstRows, secondRows] };
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      this.targetPool.release(client);
    }
  }

  /**
   * The dry run's row: the change by key, with the partition's row counts and sums before and
   * after read off it (one join instead of a scan of each side, then the join).
   */
  async measure(partition: Partition): Promise<DryRunRow> {
    const keys = await this.changeByKey(partition);
    const source: Measures = { rows: String(keys.after) };
    const target: Measures = { rows: String(keys.before) };
    for (const m of keys.measures) {
      source[m.column] = keys.after === 0 ? null : m.after;
      target[m.column] = keys.before === 0 ? null : m.before;
    }
    const change: Measures = {};
    for (const k of Object.keys(source)) change[k] = roundDiff(Number(source[k] ?? 0) - Number(target[k] ?? 0));
    return { partition, source, target, change, keys };
  }

  private keyDiff: Promise<KeyDiff> | undefined;

  private keys(): Promise<KeyDiff> {
    this.keyDiff ??= this.prepareKeys();
    return this.keyDiff;
  }

  private async prepareKeys(): Promise<KeyDiff> {
    // prepare() parse-checks every SQL text of the job before any of it reaches a server.
    await this.prepare();
    return KeyDiff.prepare({
      job: this.options.job,
      table: this.table,
      shape: this.shape,
      sameDatabase: this.sameDatabase,
      sourcePool: this.sourcePool,
      targetPool: this.targetPool,
    });
  }

  /** See PartitionTarget.changeByKey: a full outer join on one server, checksum bisection across two. */
  async changeByKey(partition: Partition, options?: KeyChangeOptions): Promise<KeyChange> {
    return (await this.keys()).recomputed(partition, options);
  }

  /** See PartitionTarget.changeSinceSnapshot: the partition now against the run's snapshot, joined on the target's server. */
  async changeSinceSnapshot(partition: Partition, runId: string, options?: KeyChangeOptions): Promise<KeyChange> {
    return (await this.keys()).againstSnapshot(partition, runId, options);
  }

  async reconcile(partition: Partition): Promise<ReconcileRow> {
    const params = this.params(partition, 'reconcile');
    const checks = await this.runRules(params);
    const mark = (await this.readMarks([partition.key])).get(partition.key);
    // The checksum the marker was published with, computed the same way over the target now.
    const kind = mark?.checksum.startsWith(checksumPrefixOf('text')) ? 'text' : this.checksumKind;
    const target = await this.targetPool.read((c) => firstRow(c, stmt.measureAndChecksumSql(this.shape, this.numeric, kind), params));
    const checksumNow = `${checksumPrefixOf(kind)}${String(target.__checksum ?? '')}`;
    const targetCount = Number(target.rows);
    const duplicateKeys =
      this.shape.key.length > 0 && !this.keyEnforced
        ? Number((await this.targetPool.read((c) => firstRow(c, stmt.duplicateKeysSql(this.shape), params))).duplicates)
        : 0;
    const problems = checks.filter((c) => !c.ok).map(describeCheck);
    if (duplicateKeys > 0) problems.push(`${duplicateKeys} duplicate key(s) on (${this.shape.key.join(', ')})`);
    if (!mark) problems.push('no marker row: the partition was never published');
    else if (this.options.writeMode === 'overwrite-partition' && mark.rowsWritten !== targetCount) {
      problems.push(`target holds ${targetCount} rows but ${mark.rowsWritten} were published by ${mark.runId}`);
    } else if (mark.checksum !== checksumNow) {
      problems.push(
        `the partition's checksum is ${checksumNow}, not the ${mark.checksum} published by ${mark.runId}: its rows changed after they were published`,
      );
    }
    return {
      partition,
      checks,
      targetCount,
      markedRows: mark?.rowsWritten ?? null,
      markRunId: mark?.runId ?? null,
      duplicateKeys,
      ok: problems.length === 0,
      problems,
    };
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

  /**
   * The source's read-only transaction with its COPY already started: the source plans and reads
   * while the target is still getting ready; the first rows wait in the socket. A session that
   * fails half way is still held, and sessions.settle() destroys it.
   */
  private openCopySource(sessions: PartitionSessions, params: Params): Promise<OpenSource> {
    const copySource = this.copySource;
    if (!copySource) throw new Error('prepare() must run before writing partitions');
    return sessions.track(
      sessions.open(this.sourcePool).then(async (source) => {
        await source.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        await setCopyParameters(source, copySource, params);
        const reader = copyTo(source, copySource.copySql);
        // **Hazard**: a stream error with no listener would crash the process if the target
        // fails before the pipe is laid; pipeline() still sees the error.
        reader.on('error', () => undefined);
        return { source, reader };
      }),
    );
  }

  /**
   * Streams the source partition into the target (or a staging table for upsert/dedupe). On
   * the way out `onSourceSide` receives the source side of the rules, read after the COPY in
   * its source transaction (without it, that transaction just commits).
   */
  private async insertByCopy(
    client: PgClient,
    sessions: PartitionSessions,
    mode: WriteMode,
    params: Params,
    onSourceSide?: (side: Promise<Measures[]>) => void,
    opening: Promise<OpenSource> = this.openCopySource(sessions, params),
  ): Promise<number> {
    const copySource = this.copySource;
    if (!copySource) throw new Error('prepare() must run before writing partitions');
    const staged = mode !== 'overwrite-partition';
    if (staged) {
      await client.query('DROP TABLE IF EXISTS pg_temp.bf_stage'); // a second write in one transaction (idempotency proof)
      await client.query(stmt.createStagingSql(this.shape));
    } else {
      await query(client, stmt.deletePartitionSql(this.shape), params);
    }
    const { source, reader } = await opening;
    const writer = copyFrom(
      client,
      stmt.copyIntoSql(staged ? 'pg_temp.bf_stage' : this.shape.quoted, this.shape.columns, copySource.binary),
    );
    await pipeline(reader, writer);
    // The source side of the rules, in the COPY's own snapshot, while the target goes on.
    const sourceSide = sessions.track(
      (async (): Promise<Measures[]> => {
        const measures = onSourceSide ? await this.sourceMeasures(source, params) : [];
        await source.query('COMMIT');
        sessions.release(source);
        return measures;
      })(),
    );
    if (onSourceSide) onSourceSide(sourceSide);
    else await sourceSide;
    if (!staged) return writer.rowCount;
    const r = await client.query(stmt.insertSql(mode, this.shape, 'pg_temp.bf_stage AS src'));
    return r.rowCount ?? 0;
  }

  /**
   * Step 3: the target side of each rule, duplicate keys, and the measures with the checksum in
   * the write transaction; then the source side (read beside the write) is compared.
   *
   * Reading the partition back, step 4's marker row is written by the same statement as the
   * measures (it needs their checksum), so it is in the transaction before the checks are
   * judged; a failed check throws and the transaction with the marker in it rolls back. Where
   * the measures come from the source rows (fingerprintFrom) the marker is returned instead,
   * to be written with the COMMIT once the checks passed.
   */
  private async validateInTransaction(
    client: PgClient,
    partition: Partition,
    ctx: WriteContext,
    params: Params,
    written: Written,
  ): Promise<{ result: PartitionWriteResult; mark?: Omit<PartitionMark, 'publishedAt'> }> {
    const { rowsWritten } = written;
    const rules = this.options.job.validation;
    // The target side reads the uncommitted partition, in a READ ONLY savepoint of the write:
    // whatever the rule's SQL tries, it cannot modify anything (userQuery.ts readOnlySavepoint).
    const targetSide: Measures[] =
      rules.length === 0
        ? []
        : await readOnlySavepoint(client, async (c) => {
            const measured: Measures[] = [];
            for (const [i, rule] of rules.entries())
              measured.push((await userFirstRow(c, rule.target, params, this.origin(`validation[${i}].target`))) as Measures);
            return measured;
          });
    const duplicateKeys =
      this.shape.key.length > 0 && !this.keyEnforced
        ? Number((await firstRow(client, stmt.duplicateKeysSql(this.shape), params)).duplicates)
        : 0;
    const checksumPrefix = checksumPrefixOf(this.checksumKind);
    let measured: Measures;
    let side: SourceSide;
    if (this.fingerprintFrom === 'source rows') {
      side = await written.sourceSide;
      if (!side.fingerprint) throw new Error('the partition fingerprint was not read from the source');
      measured = side.fingerprint;
    } else {
      const mark = {
        table: this.tableName,
        key: partition.key,
        plan_hash: ctx.planHash,
        attempt: String(ctx.attempt),
        rows: String(rowsWritten),
        checksum_prefix: checksumPrefix,
      };
      measured = await firstRow(client, stmt.measureAndMarkSql(this.shape, this.numeric, this.checksumKind, markFromMeasuresSql), {
        ...params,
        ...mark,
      });
      side = await written.sourceSide;
    }
    const { __checksum: md5, ...target } = measured;
    const source = side.rules;
    const checks = rules.map((rule, i) => compareMeasures(rule.name, source[i] ?? {}, targetSide[i] ?? {}, rule.tolerance));
    const targetCount = Number(target.rows);
    const problems = checks.filter((c) => !c.ok).map(describeCheck);
    if (duplicateKeys > 0)
      problems.push(`${duplicateKeys} duplicate key(s) on (${this.shape.key.join(', ')}) in partition ${partition.key}`);
    if (ctx.writeMode === 'overwrite-partition' && targetCount !== rowsWritten) {
      problems.push(`wrote ${rowsWritten} rows but the partition holds ${targetCount}: rows outside the source's partition filter?`);
    }
    if (problems.length > 0)
      throw new PartitionValidationError(`partition ${partition.key} did not validate, rolled back: ${problems.join('; ')}`, checks);
    const checksum = `${checksumPrefix}${String(md5 ?? '')}`;
    const first = checks[0];
    const result: PartitionWriteResult = {
      rowsWritten,
      sourceCount: first && 'rows' in first.source ? Number(first.source.rows) : null,
      sourceSums: first?.source ?? {},
      targetCount,
      targetSums: target,
      checksum,
      checks,
      duplicateKeys,
    };
    if (this.fingerprintFrom === 'target scan') return { result };
    return {
      result,
      mark: { partitionKey: partition.key, runId: ctx.runId, planHash: ctx.planHash, attempt: ctx.attempt, rowsWritten, checksum },
    };
  }

  /** Decided once in prepare(): hash_record_extended where every column type has an extended hash. */
  private checksumKind: stmt.ChecksumKind = 'record';

  /** The source side of each rule, in order, on `client` (whose transaction fixes the snapshot). */
  private async sourceMeasures(client: PgClient, params: Params): Promise<Measures[]> {
    const measures: Measures[] = [];
    for (const [i, rule] of this.options.job.validation.entries())
      measures.push((await userFirstRow(client, rule.source, params, this.origin(`validation[${i}].source`))) as Measures);
    return measures;
  }

  /** Each validation rule after the fact (reconcile): each side read-only on its own server. */
  private async runRules(params: Params): Promise<RuleCheck[]> {
    const checks: RuleCheck[] = [];
    for (const [i, rule] of this.options.job.validation.entries()) {
      const source = await this.sourcePool.read((c) => userFirstRow(c, rule.source, params, this.origin(`validation[${i}].source`)));
      const target = await this.targetPool.read((c) => userFirstRow(c, rule.target, params, this.origin(`validation[${i}].target`)));
      checks.push(compareMeasures(rule.name, source as Measures, target as Measures, rule.tolerance));
    }
    return checks;
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

const PROBE_PARAMS = { partition_start: '1970-01-01T00:00:00+00:00', partition_end: '1970-01-02T00:00:00+00:00', run_id: 'probe' };

/**
 * Columns (and their types) the source query returns, asked of the server without running it
 * for real (LIMIT 0), in the caller's READ ONLY transaction. A query the server refuses is exit
 * 2 naming source.query (userSqlError).
 */
async function sourceColumns(client: PgClient, sourceQuery: string, origin: SqlOrigin): Promise<QueryField[]> {
  const probe = `SELECT * FROM ${stmt.sourceAsTable(sourceQuery)} LIMIT 0`;
  try {
    return (await query(client, probe, PROBE_PARAMS)).fields;
  } catch (err) {
    throw userSqlError(err, origin, sourceQuery);
  }
}

/**
 * A validation rule's SQL, planned by its server without producing a row (LIMIT 0), read-only;
 * like the source query it may call the server's functions only where they are declared STABLE
 * or IMMUTABLE, so a rule that would fail on its first write is exit 2 now, not a failed run.
 */
async function describeRule(client: PgClient, sql: string, origin: SqlOrigin): Promise<void> {
  await refuseVolatileFunctions(client, (await checkReadOnlySelect(sql, origin)).functions, origin);
  try {
    await query(client, `SELECT * FROM ${stmt.sourceAsTable(sql)} LIMIT 0`, PROBE_PARAMS);
  } catch (err) {
    throw userSqlError(err, origin, sql);
  }
}

/** The id pg_export_snapshot() returned in beginWriteSql's answer, if it exported one. */
function exportedSnapshot(begun: Answer | undefined): string | undefined {
  const snapshot = begun?.results[1]?.rows[0]?.snapshot;
  return typeof snapshot === 'string' ? snapshot : undefined;
}

/** Whether every column type of the table has an extended hash function (see recordHashProbeSql). */
async function recordHashWorks(client: PgClient, quoted: string): Promise<boolean> {
  try {
    await client.query(stmt.recordHashProbeSql({ quoted }));
    return true;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== '42883' && code !== '0A000') throw err;
    return false;
  }
}

/** The marker checksum's prefix names how it was computed: `h64:` record hash, `md5:` row text. */
function checksumPrefixOf(kind: stmt.ChecksumKind): string {
  return kind === 'record' ? 'h64:' : 'md5:';
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
