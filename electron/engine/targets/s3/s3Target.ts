/**
 * An S3 partition as a partition target, fed by a Postgres query or by another S3 location:
 * publishPartition (publish.ts) is its atomic step, its manifests are its markers.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Partition } from '../../../../shared/partitions.ts';
import type { Job, S3Target, WriteMode } from '../../../../shared/schemas.ts';
import { InputError } from '../../../../shared/errors.ts';
import { compareMeasures, describeCheck } from '../../executor/compare.ts';
import { PartitionValidationError } from '../../executor/errors.ts';
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
import { uploadCutoff, type S3Bucket } from './bucket.ts';
import { mapLimit } from './concurrency.ts';
import { describeS3Error, isTransientS3Error } from './errors.ts';
import type { S3Ledger } from './ledger.ts';
import { markOf, parseManifest, partitionChecksum, type ManifestObject, type PartitionManifest } from './manifest.ts';
import { belongsTo, manifestKeyOf, renderPath } from './paths.ts';
import { cleanupAbandoned, publishPartition } from './publish.ts';
import { checkBucket, partitionValues, S3RecordSource, type RecordSource, type SourceCounts } from './sources.ts';
import { targetEncoding } from './formats.ts';
import type { LakeSession } from './lakeSession.ts';
import { openLake } from './lakeSession.ts';
import { makeWorkDir } from './workDirs.ts';
import { readerSql, type Encoding } from './lakeSql.ts';
import { writeLakeObjects } from './lakeWriter.ts';
import { PostgresRecordSource } from './pgJsonSource.ts';
import { writeParquetObjects, writesCodec } from './pgParquet.ts';
import { writeObjects, type ObjectLabels } from './partWriter.ts';
import { stageObjects } from './stage.ts';
import { S3_RULE_MEASURE } from '../../../../shared/schemas.ts';

/** Tags every object a backfill writes carries (S3 allows ten): what `lake tidy` and a reader tell apart by. */
export function backfillLabels(runId: string, planHash: string, partitionKey: string, job: string): ObjectLabels {
  return {
    tags: { source: 'backfill', run_id: runId, plan_hash: planHash },
    metadata: { 'backfill-run-id': runId, 'backfill-plan-hash': planHash, 'backfill-partition': partitionKey, 'backfill-job': job },
  };
}

export interface S3TargetOptions {
  job: Job;
  spec: S3Target;
  writeMode: WriteMode;
  bucket: S3Bucket;
  source: RecordSource;
  /** The local store's S3 ledger; required to write (dry runs need none). */
  ledger?: S3Ledger;
}

export class S3PartitionTarget implements PartitionTarget {
  readonly label: string;
  private prepared: Promise<void> | undefined;
  private readonly encoding: Encoding;

  constructor(private readonly options: S3TargetOptions) {
    this.label = `${options.bucket.url(options.spec.path)} on ${options.job.target.connection}`;
    this.encoding = targetEncoding(options.spec);
  }

  private stemOf(partitionKey: string): string {
    return renderPath(this.options.spec.path, partitionKey, this.options.job.unit, 'target.path');
  }

  /** JSON Lines out, plain or gzip, from rows that stream as JSON Lines: Node writes them; else DuckDB. */
  private async streamsThrough(partition: Partition): Promise<boolean> {
    if (this.encoding.format !== 'jsonl' || this.encoding.compression === 'zstd') return false;
    const { source } = this.options;
    return source instanceof S3RecordSource ? source.streams(await source.objectsOf(partition)) : true;
  }

  prepare(): Promise<void> {
    this.prepared ??= (async () => {
      uploadCutoff(); // a malformed BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF is refused before anything is written
      if (this.options.source instanceof S3RecordSource) {
        // two bucket checks at once; the target's refusal is reported first
        const [target, source] = await Promise.allSettled([
          checkBucket(this.options.bucket, 'target.connection'),
          this.options.source.prepare(),
        ]);
        if (target.status === 'rejected') throw target.reason;
        if (source.status === 'rejected') throw source.reason;
      } else {
        // a Postgres source's SQL is checked and probed only once the target's bucket answers
        await checkBucket(this.options.bucket, 'target.connection');
        await this.options.source.prepare();
      }
      // Leftovers of runs that died (objects no manifest lists, open uploads) go first.
      if (this.options.ledger) await cleanupAbandoned(this.options.bucket, this.options.ledger);
    })();
    return this.prepared;
  }

  async readMarks(keys: readonly string[]): Promise<Map<string, PartitionMark>> {
    const found = await mapLimit(keys, this.options.bucket.concurrency, (key) => this.manifestOf(key));
    const marks = new Map<string, PartitionMark>();
    found.forEach((m, i) => {
      const key = keys[i];
      if (m && key !== undefined) marks.set(key, { ...markOf(m), partitionKey: key });
    });
    return marks;
  }

  async writePartition(partition: Partition, ctx: WriteContext): Promise<PartitionWriteResult> {
    const { ledger, bucket, spec, job } = this.options;
    if (!ledger) throw new Error('an S3 target needs the local store to write (its ledger records every object before it is written)');
    const stem = this.stemOf(partition.key);
    const labels = backfillLabels(ctx.runId, ctx.planHash, partition.key, job.name);
    // The partition's private folder: staged source objects, the objects before upload, DuckDB's spill.
    const dir = makeWorkDir('lake');
    const lake = openLake(dir, job.timezone);
    let outputs: { files: string[]; encoding: Encoding } = { files: [], encoding: this.encoding };
    let stored: number | undefined;
    let closing: Promise<void> | undefined;
    try {
      const { result } = await publishPartition({
        bucket,
        ledger,
        stem,
        partition,
        runId: ctx.runId,
        planHash: ctx.planHash,
        attempt: ctx.attempt,
        signal: ctx.signal,
        labels,
        write: async (hooks) => {
          const upload = { bucket, stem, labels, signal: ctx.signal, keepIn: join(dir, 'out'), ...hooks };
          if (await this.streamsThrough(partition)) {
            const stream = await this.options.source.open(partition, ctx.signal);
            const gzip = this.encoding.compression === 'gzip';
            const objects = await writeObjects(stream.records, { ...upload, gzip, recordsPerObject: spec.records_per_object });
            outputs = { files: objects.map((o) => join(dir, 'out', `part-${objects.indexOf(o)}`)), encoding: this.encoding };
            return { objects, counts: stream.counts() };
          }
          const { source } = this.options;
          if (this.encoding.format === 'parquet' && writesCodec(this.encoding.parquet) && source instanceof PostgresRecordSource) {
            // Postgres → Parquet without DuckDB when every column's type allows (pgParquet.ts)
            const rows = await source.openParquet(partition, ctx.signal);
            if (rows) {
              const out = join(dir, 'out');
              const written = await writeParquetObjects(
                rows.chunks,
                rows.columns,
                this.encoding.parquet,
                spec.records_per_object,
                out,
                upload,
              );
              outputs = { files: written.objects.map((o) => o.file), encoding: this.encoding };
              return { objects: written.objects, counts: { records: written.rows, objects: null, bytes: null } };
            }
          }
          const relation = await this.options.source.lakeRelation(partition, lake, partitionValues(partition, ctx.runId), ctx.signal);
          const session = await lake.session();
          const { objects, rows } = await writeLakeObjects(
            {
              session,
              select: relation.select,
              encoding: this.encoding,
              recordsPerObject: spec.records_per_object,
              outDir: join(dir, 'out'),
              field: 'source.query',
              sql: job.source.kind === 's3' ? (job.source.query ?? '') : '',
            },
            upload,
          );
          outputs = { files: objects.map((o) => o.file), encoding: this.encoding };
          // Read back: the records the written files hold, counted by reading them, not by the writer.
          stored = objects.length === 0 ? 0 : await session.run(`SELECT count(*) FROM ${readerSql(outputs.files, this.encoding)}`);
          relation.settle?.(rows);
          return { objects, counts: { ...relation.counts, records: rows } };
        },
        validate: async (objects, counts) => {
          const verdict = await this.validate(partition, objects, counts, stored, async () => {
            const s = await lake.session();
            await this.defineTarget(s, outputs.files, outputs.encoding);
            return s;
          });
          // DuckDB is done with the partition. Its close takes tens of milliseconds of this thread
          // (bench (k)): begun on the next turn, it runs while the publish's requests are out.
          closing = new Promise<void>((done, fail) => setImmediate(() => void lake.close().then(done, fail)));
          closing.catch(() => undefined); // awaited below; a failure surfaces there
          return verdict;
        },
        onValidated: (r) => ctx.onValidated(r),
      });
      return result;
    } finally {
      await (closing ?? lake.close());
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** `target`: the partition's output files, for validation rules written in SQL. */
  private async defineTarget(session: LakeSession, files: readonly string[], encoding: Encoding): Promise<void> {
    if (files.length === 0) await session.view('target', '(SELECT NULL AS no_records WHERE false)');
    else await session.view('target', readerSql(files, encoding));
  }

  /** Step 3 of the protocol: counts, sizes as stored, and the job's rules. */
  private async validate(
    partition: Partition,
    objects: ManifestObject[],
    counts: SourceCounts,
    /** the records the output files hold, read back (DuckDB's outputs) */
    readBack: number | undefined,
    targetLake: () => Promise<LakeSession>,
  ): Promise<PartitionWriteResult> {
    const problems: string[] = [];
    const written = objects.reduce((n, o) => n + o.records, 0);
    if (written !== counts.records) problems.push(`read ${counts.records} records but wrote ${written}`);
    if (readBack !== undefined && readBack !== written) problems.push(`wrote ${written} records but the objects hold ${readBack}`);
    const heads = await mapLimit(objects, this.options.bucket.concurrency, (o) => this.options.bucket.head(o.key));
    objects.forEach((o, i) => {
      const size = heads[i]?.size;
      if (size !== o.size) problems.push(`${this.options.bucket.url(o.key)} holds ${size ?? 'nothing'} bytes, ${o.size} were written`);
    });
    const checks = await this.runRules(partition, { records: written }, targetLake);
    problems.push(...checks.filter((c) => !c.ok).map(describeCheck));
    if (problems.length > 0)
      throw new PartitionValidationError(`partition ${partition.key} did not validate, nothing published: ${problems.join('; ')}`, checks);
    const first = checks[0];
    return {
      rowsWritten: written,
      sourceCount: counts.records,
      sourceSums: first?.source ?? { records: counts.records },
      targetCount: written,
      targetSums: { records: written, bytes: objects.reduce((n, o) => n + o.size, 0), objects: objects.length },
      checksum: partitionChecksum(objects),
      checks,
      duplicateKeys: 0,
    };
  }

  /** Target sides: "records", or a read-only DuckDB SELECT over `target` (the partition's objects as written). */
  private async runRules(partition: Partition, target: Measures, targetLake: () => Promise<LakeSession>): Promise<RuleCheck[]> {
    const checks: RuleCheck[] = [];
    for (const [i, rule] of this.options.job.validation.entries()) {
      const source = await this.options.source.ruleMeasures(rule.source, partition, `validation[${i}].source`);
      const measured =
        rule.target.trim() === S3_RULE_MEASURE
          ? target
          : await (await targetLake()).measures(rule.target, `validation.${i}.target`, partitionValues(partition));
      checks.push(compareMeasures(rule.name, source, measured, rule.tolerance));
    }
    return checks;
  }

  /** `target` over a published partition's objects, staged from S3, for reconcile. */
  private async publishedLake<T>(manifest: PartitionManifest, fn: (lake: () => Promise<LakeSession>) => Promise<T>): Promise<T> {
    const dir = makeWorkDir('lake');
    const lake = openLake(dir, this.options.job.timezone);
    let defined: Promise<LakeSession> | undefined;
    try {
      return await fn(
        () =>
          (defined ??= (async () => {
            const opening = lake.session(); // DuckDB opens while the objects download
            opening.catch(() => undefined);
            const staged = await stageObjects(this.options.bucket, manifest.objects, join(dir, 'target'));
            const session = await opening;
            for (const o of staged) session.name(o.file, this.options.bucket.url(o.key));
            await this.defineTarget(
              session,
              staged.map((o) => o.file),
              this.encoding,
            );
            return session;
          })()),
      );
    } finally {
      await lake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  async measure(partition: Partition): Promise<DryRunRow> {
    const source = await this.options.source.measure(partition);
    const now = await this.holding(partition.key);
    return {
      partition,
      source: { objects: source.objects, bytes: source.bytes, records: source.records },
      target: { objects: now.objects, bytes: now.bytes, records: now.records, published_by: now.manifest?.run_id ?? null },
      change: { rows: source.records - (now.records ?? 0), records: source.records - (now.records ?? 0) },
    };
  }

  /** What the partition holds now: its manifest (if ours) and the objects under its stem. */
  private async holding(
    partitionKey: string,
  ): Promise<{ manifest: PartitionManifest | null; objects: number; bytes: number; records: number | null; keys: Map<string, number> }> {
    const stem = this.stemOf(partitionKey);
    const [all, manifest] = await Promise.all([this.options.bucket.listAll(stem), this.manifestOf(partitionKey)]);
    const listed = all.filter((o) => belongsTo(stem, o.key) && o.key !== manifestKeyOf(stem));
    return {
      manifest,
      objects: listed.length,
      bytes: listed.reduce((n, o) => n + o.size, 0),
      records: manifest ? manifest.records : listed.length === 0 ? 0 : null,
      keys: new Map(listed.map((o) => [o.key, o.size])),
    };
  }

  async reconcile(partition: Partition): Promise<ReconcileRow> {
    // The source is measured while the partition is listed: a published partition (the only kind
    // reconciled) needs both; a failure to measure counts only if there is a manifest to compare.
    const measuring = this.options.source.measure(partition).then(
      (counts) => ({ counts }),
      (error: unknown) => ({ error }),
    );
    const now = await this.holding(partition.key).catch(async (err: unknown) => {
      await measuring;
      throw err;
    });
    const problems: string[] = [];
    const checks: RuleCheck[] = [];
    const manifest = now.manifest;
    if (!manifest) {
      problems.push('no _complete manifest: the partition was never published');
      await measuring; // nothing left running behind the answer
    } else {
      for (const o of manifest.objects) {
        const size = now.keys.get(o.key);
        if (size === undefined) problems.push(`${this.options.bucket.url(o.key)} is listed in the manifest but missing`);
        else if (size !== o.size) problems.push(`${this.options.bucket.url(o.key)} holds ${size} bytes, the manifest says ${o.size}`);
      }
      const listed = new Set(manifest.objects.map((o) => o.key));
      const strays = [...now.keys.keys()].filter((k) => !listed.has(k));
      if (strays.length > 0)
        problems.push(
          `${strays.length} object(s) in the partition are not in its manifest, e.g. ${this.options.bucket.url(strays[0] ?? '')}`,
        );
      const measured = await measuring;
      if ('error' in measured) throw measured.error;
      const source = measured.counts;
      if (source.records !== manifest.records)
        problems.push(`the source holds ${source.records} records, the manifest ${manifest.records}`);
      checks.push(...(await this.publishedLake(manifest, (lake) => this.runRules(partition, { records: manifest.records }, lake))));
      problems.push(...checks.filter((c) => !c.ok).map(describeCheck));
    }
    return {
      partition,
      checks,
      targetCount: manifest?.records ?? 0,
      markedRows: manifest?.records ?? null,
      markRunId: manifest?.run_id ?? null,
      ok: problems.length === 0,
      problems,
    };
  }

  isTransient(err: unknown): boolean {
    return isTransientS3Error(err) || this.options.source.isTransient(err);
  }

  /** S3 has no lock waits; a busy partition is PartitionBusyError. */
  isLockWait(): boolean {
    return false;
  }

  async close(): Promise<void> {
    await this.options.source.close();
    this.options.bucket.close();
  }

  private async manifestOf(partitionKey: string): Promise<PartitionManifest | null> {
    const key = manifestKeyOf(this.stemOf(partitionKey));
    try {
      const text = await this.options.bucket.getText(key);
      return text === null ? null : parseManifest(text);
    } catch (err) {
      if (isTransientS3Error(err)) throw err;
      throw new InputError(describeS3Error(err, this.options.bucket.url(key)), { field: 'target.connection' });
    }
  }
}
