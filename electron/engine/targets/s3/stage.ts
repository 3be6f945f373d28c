/**
 * Brings a partition's objects to a private local folder, through the project's own S3 client
 * (signing, retries, the sandbox's server), for DuckDB to read: streamed to disk, never held in
 * memory, at most `concurrency` at a time, and bounded in count and size (see LAKE_LIMITS).
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InputError } from '../../../../shared/errors.ts';
import type { S3Bucket } from './bucket.ts';
import { mapLimit } from './concurrency.ts';
import type { ObjectRef } from './records.ts';

/** Documented in the README (S3 jobs): what one partition may hold. */
export const LAKE_LIMITS = {
  /** objects in one partition */
  objects: Number(process.env.BACKFILL_RUNBOOK_MAX_PARTITION_OBJECTS ?? 10_000),
  /** bytes of one partition's objects, as stored */
  bytes: Number(process.env.BACKFILL_RUNBOOK_MAX_PARTITION_BYTES ?? 50 * 1024 ** 3),
} as const;

export interface StagedObject {
  key: string;
  file: string;
  size: number;
  /** the ETag of the version downloaded */
  etag: string;
}

/** Refuses a partition over the limits before anything is downloaded. */
export function checkPartitionSize(bucket: S3Bucket, stem: string, objects: readonly ObjectRef[]): void {
  const bytes = objects.reduce((n, o) => n + o.size, 0);
  if (objects.length > LAKE_LIMITS.objects || bytes > LAKE_LIMITS.bytes) {
    throw new InputError(
      `partition ${bucket.url(stem)} holds ${objects.length} objects, ${bytes} bytes: over the limit of ${LAKE_LIMITS.objects} objects and ${LAKE_LIMITS.bytes} bytes per partition (BACKFILL_RUNBOOK_MAX_PARTITION_OBJECTS / _BYTES); use a finer unit`,
      { field: 'source.path', value: stem },
    );
  }
}

/** Downloads `objects` into `dir` as `<index>.<ending of the key>`, in order. */
export async function stageObjects(
  bucket: S3Bucket,
  objects: readonly ObjectRef[],
  dir: string,
  signal?: AbortSignal,
): Promise<StagedObject[]> {
  mkdirSync(dir, { recursive: true });
  return mapLimit(objects, Math.min(4, bucket.concurrency), async (o, i) => {
    const file = join(dir, `${String(i).padStart(6, '0')}${ending(o.key)}`);
    const { body, etag } = await bucket.getObject(o.key, signal);
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        cb(null, chunk);
      },
    });
    await pipeline(body, count, createWriteStream(file), signal ? { signal } : {});
    return { key: o.key, file, size, etag };
  });
}

/** `.parquet`, `.csv.gz`, `.json.zst` … as the key ends (DuckDB picks compression by it). */
function ending(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const m = /((?:\.[A-Za-z0-9]{1,8}){1,2})$/.exec(name);
  return m?.[1] ?? '';
}
