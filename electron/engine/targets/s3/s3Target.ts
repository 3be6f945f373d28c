/**
 * An S3 partition as a partition target, fed by a Postgres query or by another S3 location:
 * publishPartition (publish.ts) is its atomic step, its manifests are its markers.
 */
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
import type { S3Bucket } from './bucket.ts';
import { mapLimit } from './concurrency.ts';
import { describeS3Error, isTransientS3Error } from './errors.ts';
import type { S3Ledger } from './ledger.ts';
import { markOf, parseManifest, partitionChecksum, type ManifestObject, type PartitionManifest } from './manifest.ts';
import { belongsTo, manifestKeyOf, renderPath } from './paths.ts';
import { cleanupAbandoned, publishPartition } from './publish.ts';
import { checkBucket, type RecordSource, type SourceCounts } from './sources.ts';

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

  constructor(private readonly options: S3TargetOptions) {
    this.label = `${options.bucket.url(options.spec.path)} on ${options.job.target.connection}`;
  }

  private stemOf(partitionKey: string): string {
    return renderPath(this.options.spec.path, partitionKey, this.options.job.unit);
  }

  prepare(): Promise<void> {
    this.prepared ??= (async () => {
      await checkBucket(this.options.bucket, 'target.connection');
      await this.options.source.prepare();
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
    const { ledger, bucket, spec } = this.options;
    if (!ledger) throw new Error('an S3 target needs the local store to write (its ledger records every object before it is written)');
    const source = await this.options.source.open(partition, ctx.signal);
    const { result } = await publishPartition({
      bucket,
      ledger,
      stem: this.stemOf(partition.key),
      partition,
      runId: ctx.runId,
      planHash: ctx.planHash,
      attempt: ctx.attempt,
      gzip: spec.gzip,
      recordsPerObject: spec.records_per_object,
      signal: ctx.signal,
      source,
      validate: (objects, counts) => this.validate(partition, objects, counts),
      onValidated: (r) => ctx.onValidated(r),
    });
    return result;
  }

  /** Step 3 of the protocol: counts, sizes as stored, and the job's rules. */
  private async validate(partition: Partition, objects: ManifestObject[], counts: SourceCounts): Promise<PartitionWriteResult> {
    const problems: string[] = [];
    const written = objects.reduce((n, o) => n + o.records, 0);
    if (written !== counts.records) problems.push(`read ${counts.records} records but wrote ${written}`);
    const stored = await mapLimit(objects, this.options.bucket.concurrency, (o) => this.options.bucket.head(o.key));
    objects.forEach((o, i) => {
      const size = stored[i]?.size;
      if (size !== o.size) problems.push(`${this.options.bucket.url(o.key)} holds ${size ?? 'nothing'} bytes, ${o.size} were written`);
    });
    const checks = await this.runRules(partition, { records: written });
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

  private async runRules(partition: Partition, target: Measures): Promise<RuleCheck[]> {
    const checks: RuleCheck[] = [];
    for (const rule of this.options.job.validation) {
      const source = await this.options.source.ruleMeasures(rule.source, partition);
      checks.push(compareMeasures(rule.name, source, target, rule.tolerance));
    }
    return checks;
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
    const listed = (await this.options.bucket.listAll(stem)).filter((o) => belongsTo(stem, o.key) && o.key !== manifestKeyOf(stem));
    const manifest = await this.manifestOf(partitionKey);
    return {
      manifest,
      objects: listed.length,
      bytes: listed.reduce((n, o) => n + o.size, 0),
      records: manifest ? manifest.records : listed.length === 0 ? 0 : null,
      keys: new Map(listed.map((o) => [o.key, o.size])),
    };
  }

  async reconcile(partition: Partition): Promise<ReconcileRow> {
    const now = await this.holding(partition.key);
    const problems: string[] = [];
    const checks: RuleCheck[] = [];
    const manifest = now.manifest;
    if (!manifest) problems.push('no _complete manifest: the partition was never published');
    else {
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
      const source = await this.options.source.measure(partition);
      if (source.records !== manifest.records)
        problems.push(`the source holds ${source.records} records, the manifest ${manifest.records}`);
      checks.push(...(await this.runRules(partition, { records: manifest.records })));
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
