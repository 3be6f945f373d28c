/**
 * Where the records of a partition come from: the objects of an S3 partition (any format, with
 * or without a query), or the rows of a Postgres query rendered by the server as JSON. As JSON
 * Lines for writers that stream them, or as DuckDB's relation `source` (lakeRelation) for
 * writers that let DuckDB encode. In an order that depends only on the content where the
 * format allows, so a rerun writes byte-identical objects.
 */
import { createReadStream, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Partition } from '../../../../shared/partitions.ts';
import type { S3Source, Unit } from '../../../../shared/schemas.ts';
import { InputError } from '../../../../shared/errors.ts';
import type { Measures } from '../../executor/types.ts';
import type { ListedObject, S3Bucket } from './bucket.ts';
import { describeS3Error, isNotFound } from './errors.ts';
import { parseManifest } from './manifest.ts';
import { sourceEncoding, streamsAsJsonLines } from './formats.ts';
import { openLake, type Lake, type LakeSession, type PartitionValues } from './lakeSession.ts';
import { makeWorkDir } from './workDirs.ts';
import { readerSql, type Encoding } from './lakeSql.ts';
import { isDataKey, manifestKeyOf, renderPath } from './paths.ts';
import { blocksOf, lines, readRecords, type ObjectRef, type ReadCounts, type RecordBlock } from './records.ts';
import { checkPartitionSize, stageObjects } from './stage.ts';

export interface SourceCounts {
  records: number;
  /** null for a Postgres source */
  objects: number | null;
  bytes: number | null;
}

export interface RecordStream {
  records: AsyncIterable<RecordBlock>;
  /** Final once `records` is exhausted. */
  counts(): SourceCounts;
}

/** The partition as DuckDB's relation `source`, with the SELECT whose rows are the partition's records. */
export interface LakeRelation {
  select: { table: string; values: string[] };
  /** the source's objects and bytes (null for Postgres); records are counted by whoever runs `select` */
  counts: Omit<SourceCounts, 'records'>;
  /** Tells the source how many records `select` yielded, once counted in full (see S3RecordSource.counted). */
  settle?(records: number): void;
}

export interface RecordSource {
  readonly label: string;
  /** Defines `source` in the lake's session over this partition (staging what it must into lake.dir). */
  lakeRelation(partition: Partition, lake: Lake, values: PartitionValues, signal: AbortSignal): Promise<LakeRelation>;
  prepare(): Promise<void>;
  open(partition: Partition, signal: AbortSignal): Promise<RecordStream>;
  /** Read-only: what `open` would yield, counted. */
  measure(partition: Partition): Promise<SourceCounts>;
  /** One side of a validation rule: SQL for Postgres, `records` for S3. */
  ruleMeasures(ruleText: string, partition: Partition, field: string): Promise<Measures>;
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
  readonly encoding: Encoding;
  /**
   * What this process counted of each partition: its objects as downloaded (key, size, ETag)
   * and the records they yielded. A later measure of the partition — the reconciliation after
   * the write, a validation rule's `records` — whose objects a listing shows unchanged (same
   * keys, sizes and ETags: the same bytes) takes the count from here, instead of downloading
   * the objects and running source.query over them again. Not kept for a query whose count may
   * change between two runs over the same bytes (it calls random(), now(), a SAMPLE…): that
   * one is measured again.
   */
  private readonly counted = new Map<string, { objects: string; counts: SourceCounts }>();

  constructor(
    private readonly bucket: S3Bucket,
    private readonly spec: S3Source,
    private readonly unit: Unit,
    private readonly timezone = 'UTC',
  ) {
    this.label = bucket.url(spec.path);
    this.encoding = sourceEncoding(spec);
  }

  /** True when this partition's records stream through Node as they are (JSON Lines, gzip or plain, no query). */
  streams(objects: readonly ObjectRef[]): boolean {
    return (
      this.spec.query === undefined &&
      streamsAsJsonLines(
        this.encoding,
        objects.map((o) => o.key),
      )
    );
  }

  async lakeRelation(partition: Partition, lake: Lake, values: PartitionValues, signal: AbortSignal): Promise<LakeRelation> {
    const objects = await this.objectsOf(partition);
    const staging = stageObjects(this.bucket, objects, join(lake.dir, 'source'), signal);
    // DuckDB opens while the objects download. Its first load holds this thread for tens of
    // milliseconds (bench (k)), so it starts on the next turn, once the downloads are on their way.
    const opening = new Promise<void>((next) => setImmediate(next)).then(() => lake.session());
    opening.catch(() => undefined); // a failure to open is thrown below, once staging is done
    const staged = await staging;
    const session = await opening;
    for (const o of staged) session.name(o.file, this.bucket.url(o.key));
    const counts = { objects: staged.length, bytes: staged.reduce((n, o) => n + o.size, 0) };
    const read = objectsRead(staged);
    const settle =
      read !== undefined && stableCount(this.spec.query)
        ? (records: number) => this.counted.set(partition.key, { objects: read, counts: { ...counts, records } })
        : undefined;
    if (staged.length === 0) {
      // no objects: an empty relation still has to bind the query, so it has no columns to name
      if (this.spec.query !== undefined) {
        throw new InputError(
          `partition ${partition.key} has no objects at ${this.bucket.url(renderPath(this.spec.path, partition.key, this.unit, 'source.path'))}: source.query has nothing to read (is the path right?)`,
          { field: 'source.path', value: this.spec.path },
        );
      }
      await session.view('source', '(SELECT NULL AS no_records WHERE false)');
      return { select: { table: '(SELECT * FROM source)', values: [] }, counts, settle };
    }
    await session.view(
      'source',
      readerSql(
        staged.map((o) => o.file),
        this.encoding,
      ),
    );
    if (this.encoding.format === 'csv') await this.checkDelimiter(session, partition, staged);
    const select = this.spec.query
      ? await session.userSelect(this.spec.query, 'source.query', values)
      : { table: '(SELECT * FROM source)', values: [] };
    return { select, counts, settle };
  }

  /**
   * A CSV read with the wrong delimiter has one column whose name holds the real delimiter: say
   * so, naming the field, rather than loading every row into one column.
   */
  private async checkDelimiter(session: LakeSession, partition: Partition, staged: readonly { key: string }[]): Promise<void> {
    const columns = await session.columns('source');
    const only = columns.length === 1 ? (columns[0] ?? '') : '';
    const other = [',', ';', '\t', '|'].find((d) => d !== this.encoding.csv.delimiter && only.includes(d));
    if (other !== undefined) {
      // name the partition and its objects: of a range, only some days may have come in another delimiter
      const objects = staged.map((o) => this.bucket.url(o.key));
      const shown = objects.length > 2 ? `${objects.slice(0, 2).join(', ')} and ${objects.length - 2} more` : objects.join(', ');
      throw new InputError(
        `the CSV objects of partition ${partition.key} (${shown}) read as ONE column named ${JSON.stringify(only)} with delimiter ${JSON.stringify(this.encoding.csv.delimiter)}: they look delimited by ${JSON.stringify(other)} — set source.csv.delimiter: ${JSON.stringify(other)}`,
        { field: 'source.csv.delimiter', value: this.encoding.csv.delimiter, hint: `delimiter: ${JSON.stringify(other)}` },
      );
    }
  }

  /** The partition's records as JSON Lines, converted by DuckDB into a local file and streamed from it. */
  private async *convertedRecords(partition: Partition, counts: ReadCounts, signal: AbortSignal): AsyncGenerator<string> {
    const dir = makeWorkDir('lake');
    const lake = openLake(dir, this.timezone);
    try {
      const relation = await this.lakeRelation(partition, lake, partitionValues(partition), signal);
      const file = join(dir, 'records.json');
      await (await lake.session()).copyUserSelect(relation.select, file, 'FORMAT json', 'source.query', this.spec.query ?? '');
      await lake.close(); // DuckDB's memory is freed before the records stream out
      counts.objects = relation.counts.objects ?? 0;
      counts.bytes = relation.counts.bytes ?? 0;
      for await (const line of lines(createReadStream(file, { highWaterMark: 256 * 1024 }))) {
        if (signal.aborted) return;
        counts.records += 1;
        yield line;
      }
      relation.settle?.(counts.records);
    } finally {
      await lake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  async prepare(): Promise<void> {
    await checkBucket(this.bucket, 'source.connection');
  }

  async objectsOf(partition: Partition): Promise<ObjectRef[]> {
    const objects = await this.listObjects(partition);
    checkPartitionSize(this.bucket, renderPath(this.spec.path, partition.key, this.unit, 'source.path'), objects);
    return objects;
  }

  private async listObjects(partition: Partition): Promise<ObjectRef[]> {
    const stem = renderPath(this.spec.path, partition.key, this.unit, 'source.path');
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
      .map((o) => ({ key: o.key, size: o.size, etag: o.etag }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async open(partition: Partition, signal: AbortSignal): Promise<RecordStream> {
    const objects = await this.objectsOf(partition);
    const counts: ReadCounts = { objects: 0, bytes: 0, records: 0 };
    const gzip = this.encoding.compression === undefined ? undefined : this.encoding.compression === 'gzip';
    const records = blocksOf(
      this.streams(objects) ? readRecords(this.bucket, objects, gzip, counts, signal) : this.convertedRecords(partition, counts, signal),
    );
    return { records, counts: () => ({ ...counts }) };
  }

  async measure(partition: Partition): Promise<SourceCounts> {
    const objects = await this.objectsOf(partition);
    if (this.streams(objects)) {
      const stream = await this.open(partition, new AbortController().signal);
      for await (const _ of stream.records) {
        // counting only
      }
      return stream.counts();
    }
    const known = await this.countedBefore(partition, objects);
    if (known) return known;
    return this.withLake(partition, async (session, relation) => {
      const records = Number((await session.measuresOf(relation.select, 'count(*) AS records')).records ?? 0);
      relation.settle?.(records);
      return { ...relation.counts, records };
    });
  }

  /** The count this process took of the partition, if its objects are still the versions it read. */
  private async countedBefore(partition: Partition, objects: readonly ObjectRef[]): Promise<SourceCounts | undefined> {
    const known = this.counted.get(partition.key);
    if (!known) return undefined;
    // objects found by listing carry their ETags already; a manifest's need a listing
    const listed = objects.every((o) => o.etag !== undefined)
      ? new Map(objects.map((o) => [o.key, o as ListedObject]))
      : new Map((await this.bucket.listAll(renderPath(this.spec.path, partition.key, this.unit, 'source.path'))).map((o) => [o.key, o]));
    const now = objects.map((o) => listed.get(o.key));
    if (now.some((o) => o === undefined)) return undefined;
    return objectsRead(now as ListedObject[]) === known.objects ? known.counts : undefined;
  }

  /** "records", or a DuckDB SELECT over `source` (the partition's objects as they are, before source.query). */
  async ruleMeasures(ruleText: string, partition: Partition, field: string): Promise<Measures> {
    if (ruleText.trim() === 'records') return { records: (await this.measure(partition)).records };
    return this.withLake(partition, (session) => session.measures(ruleText, field, partitionValues(partition)));
  }

  private async withLake<T>(partition: Partition, fn: (session: LakeSession, relation: LakeRelation) => Promise<T>): Promise<T> {
    const dir = makeWorkDir('lake');
    const lake = openLake(dir, this.timezone);
    try {
      const relation = await this.lakeRelation(partition, lake, partitionValues(partition), new AbortController().signal);
      return await fn(await lake.session(), relation);
    } finally {
      await lake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  isTransient(): boolean {
    return false; // the target classifies S3 errors for both sides
  }

  close(): Promise<void> {
    this.bucket.close();
    return Promise.resolve();
  }
}

/** The objects of a read, as versions: key, size and ETag each; undefined when the server gave no ETag. */
function objectsRead(objects: readonly { key: string; size: number; etag: string }[]): string | undefined {
  if (objects.some((o) => o.etag === '')) return undefined;
  return JSON.stringify(objects.map((o) => [o.key, o.size, o.etag.replaceAll('"', '')]));
}

/**
 * False for a query whose count over the same bytes may differ from one run to the next: it
 * draws at random, reads the clock, or filters on :run_id (the write binds the run's id, a
 * later measure 'read'). A false alarm only costs a second read.
 */
function stableCount(query: string | undefined): boolean {
  return (
    query === undefined ||
    !(
      /:run_id\b/i.test(query) ||
      /\b(random|setseed|uuid|uuidv4|uuidv7|gen_random_uuid|now|today|current_date|current_time|current_timestamp|current_localtime|current_localtimestamp|localtime|localtimestamp|get_current_time|get_current_timestamp|transaction_timestamp|sample|tablesample)\b/i.test(
        query,
      )
    )
  );
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

/** The values bound to :partition_start, :partition_end and :run_id in reads. */
export function partitionValues(partition: Partition, runId = 'read'): PartitionValues {
  return { partition_start: partition.start, partition_end: partition.end, run_id: runId };
}
