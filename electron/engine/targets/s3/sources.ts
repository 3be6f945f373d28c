/**
 * Where the records of a partition come from, as JSON Lines: the objects of an S3 partition,
 * or the rows of a Postgres query rendered by the server as JSON. Either way in an order that
 * depends only on the content, so a rerun writes byte-identical objects.
 */
import type { Partition } from '../../../../shared/partitions.ts';
import type { S3Source, Unit } from '../../../../shared/schemas.ts';
import { InputError } from '../../../../shared/errors.ts';
import type { Measures } from '../../executor/types.ts';
import type { S3Bucket } from './bucket.ts';
import { describeS3Error, isNotFound } from './errors.ts';
import { parseManifest } from './manifest.ts';
import { isDataKey, manifestKeyOf, renderPath } from './paths.ts';
import { readRecords, type ObjectRef, type ReadCounts } from './records.ts';

export interface SourceCounts {
  records: number;
  /** null for a Postgres source */
  objects: number | null;
  bytes: number | null;
}

export interface RecordStream {
  records: AsyncIterable<string>;
  /** Final once `records` is exhausted. */
  counts(): SourceCounts;
}

export interface RecordSource {
  readonly label: string;
  prepare(): Promise<void>;
  open(partition: Partition, signal: AbortSignal): Promise<RecordStream>;
  /** Read-only: what `open` would yield, counted. */
  measure(partition: Partition): Promise<SourceCounts>;
  /** One side of a validation rule: SQL for Postgres, `records` for S3. */
  ruleMeasures(ruleText: string, partition: Partition): Promise<Measures>;
  isTransient(err: unknown): boolean;
  close(): Promise<void>;
}

/** A partition whose `_complete` marker is missing while the job requires it. */
export class IncompletePartitionError extends Error {
  override readonly name = 'IncompletePartitionError';
}

/** The objects of an S3 partition: those its manifest lists, or (no manifest of ours) those listed under its stem. */
export class S3RecordSource implements RecordSource {
  readonly label: string;

  constructor(
    private readonly bucket: S3Bucket,
    private readonly spec: S3Source,
    private readonly unit: Unit,
  ) {
    this.label = bucket.url(spec.path);
  }

  async prepare(): Promise<void> {
    await checkBucket(this.bucket, 'source.connection');
  }

  async objectsOf(partition: Partition): Promise<ObjectRef[]> {
    const stem = renderPath(this.spec.path, partition.key, this.unit);
    const marker = await this.bucket.getText(manifestKeyOf(stem));
    const manifest = marker === null ? null : parseManifest(marker);
    // Follow our manifest when there is one: objects it does not list are not part of the partition.
    if (manifest) return manifest.objects.map((o) => ({ key: o.key, size: o.size }));
    if (marker === null && this.spec.require_complete) {
      throw new IncompletePartitionError(
        `${this.bucket.url(manifestKeyOf(stem))} does not exist: partition ${partition.key} is not complete (or has no data) at the source; wait for it, or set source.require_complete: false to read whatever is there`,
      );
    }
    const listed = await this.bucket.listAll(stem);
    return listed
      .filter((o) => isDataKey(stem, o.key))
      .map((o) => ({ key: o.key, size: o.size }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async open(partition: Partition, signal: AbortSignal): Promise<RecordStream> {
    const objects = await this.objectsOf(partition);
    const counts: ReadCounts = { objects: 0, bytes: 0, records: 0 };
    return { records: readRecords(this.bucket, objects, this.spec.gzip, counts, signal), counts: () => ({ ...counts }) };
  }

  async measure(partition: Partition): Promise<SourceCounts> {
    const stream = await this.open(partition, new AbortController().signal);
    for await (const _ of stream.records) {
      // counting only
    }
    return stream.counts();
  }

  async ruleMeasures(ruleText: string, partition: Partition): Promise<Measures> {
    if (ruleText.trim() !== 'records')
      throw new InputError(`an S3 side of a validation rule must say "records", got ${JSON.stringify(ruleText)}`, { field: 'validation' });
    return { records: (await this.measure(partition)).records };
  }

  isTransient(): boolean {
    return false; // the target classifies S3 errors for both sides
  }

  close(): Promise<void> {
    this.bucket.close();
    return Promise.resolve();
  }
}

/** Turns "cannot reach the bucket" into the user's problem to fix, with the reason. */
export async function checkBucket(bucket: S3Bucket, field: string): Promise<void> {
  try {
    await bucket.check();
  } catch (err) {
    const why = isNotFound(err)
      ? `bucket ${bucket.name} does not exist: check bucket in the connection`
      : describeS3Error(err, bucket.url(''));
    throw new InputError(`cannot use bucket ${bucket.name}: ${why}`, { field, value: bucket.name });
  }
}
