/**
 * Turns a partition's records into its data objects: each object is spooled to a local temp
 * file (gzip when asked) while its sha256 is taken, then uploaded under a name derived from
 * that sha256 (paths.dataObjectKey), streamed from that file (bucket.uploadFile). Memory stays
 * bounded by one block, whatever the partition's size.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { once } from 'node:events';
import { AbortedError } from '../../executor/errors.ts';
import type { S3Bucket } from './bucket.ts';
import type { ManifestObject } from './manifest.ts';
import { dataObjectKey } from './paths.ts';
import { endOfLine, type RecordBlock } from './records.ts';
import { makeWorkDir } from './workDirs.ts';

/** What every object a backfill writes carries: tags (source=backfill, run_id, plan_hash) and metadata. */
export interface ObjectLabels {
  tags: Record<string, string>;
  metadata: Record<string, string>;
}

export interface UploadOptions {
  bucket: S3Bucket;
  stem: string;
  labels: ObjectLabels;
  /** Called before an object is written (the ledger records it first). */
  beforeWrite(key: string): void;
  /** Called with a multipart upload's id as soon as S3 hands it out. */
  onUploadId(key: string, uploadId: string): void;
  /** The size of `key` as the partition was listed before the write; without it, a HEAD asks. */
  existing?(key: string): Promise<number | undefined>;
  signal: AbortSignal;
  /** Keep the local files (for validation rules that read the output); the caller removes `dir`. */
  keepIn?: string;
}

export interface WriterOptions extends UploadOptions {
  gzip: boolean;
  recordsPerObject: number;
}

export async function writeObjects(records: AsyncIterable<RecordBlock>, opts: WriterOptions): Promise<ManifestObject[]> {
  const dir = opts.keepIn ?? makeWorkDir('s3');
  mkdirSync(dir, { recursive: true });
  const written: ManifestObject[] = [];
  try {
    let part: Spool | undefined;
    const finishPart = async (): Promise<void> => {
      if (!part) return;
      const spooled = await part.close();
      const ext = opts.gzip ? 'json.gz' : 'json';
      written.push(await uploadObject(spooled, written.length, ext, opts.gzip ? 'application/gzip' : 'application/x-ndjson', opts));
      part = undefined;
    };
    for await (const block of records) {
      let { data, count } = block;
      while (count > 0) {
        if (opts.signal.aborted) throw new AbortedError();
        part ??= new Spool(join(dir, `part-${written.length}`), opts.gzip);
        const room = opts.recordsPerObject - part.records;
        const take = Math.min(room, count);
        // the block's first `take` lines go to this object, the rest to the next
        const cut = take === count ? data.length : endOfLine(data, take) + 1;
        await part.write(data.subarray(0, cut));
        part.records += take;
        data = data.subarray(cut);
        count -= take;
        if (part.records >= opts.recordsPerObject) await finishPart();
      }
    }
    await finishPart();
    return written;
  } finally {
    if (opts.keepIn === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

export interface Spooled {
  file: string;
  size: number;
  sha256: string;
  records: number;
}

/** One object being written to a temp file, hashed as it goes. */
class Spool {
  records = 0;
  private size = 0;
  private readonly hash = createHash('sha256');
  private readonly input: Writable;
  private readonly done: Promise<void>;

  constructor(
    private readonly file: string,
    gzip: boolean,
  ) {
    const tap = new Transform({
      transform: (data: Buffer, _enc, cb) => {
        this.hash.update(data);
        this.size += data.length;
        cb(null, data);
      },
    });
    const out = createWriteStream(file);
    if (gzip) {
      const gz = createGzip({ level: 6 });
      this.input = gz;
      this.done = pipeline(gz, tap, out);
    } else {
      this.input = tap;
      this.done = pipeline(tap, out);
    }
    this.done.catch(() => undefined); // surfaced by close()
  }

  async write(data: Buffer): Promise<void> {
    if (!this.input.write(data)) await once(this.input, 'drain');
  }

  async close(): Promise<Spooled> {
    this.input.end();
    await this.done;
    return { file: this.file, size: this.size, sha256: this.hash.digest('hex'), records: this.records };
  }
}

/** A local file's size and sha256, read as a stream. */
export async function hashFile(file: string, records: number): Promise<Spooled> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return { file, size: statSync(file).size, sha256: hash.digest('hex'), records };
}

/** Uploads one local object under its content name, tagged and labelled; returns its manifest entry. */
export async function uploadObject(
  spooled: Spooled,
  index: number,
  ext: string,
  contentType: string,
  opts: UploadOptions,
): Promise<ManifestObject & { file: string }> {
  const key = dataObjectKey(opts.stem, index, spooled.sha256, ext);
  opts.beforeWrite(key);
  // The name is the content: an object already there under it (a rerun of the same
  // records) holds these very bytes; it is relabelled as this run's.
  const existing = opts.existing ? await opts.existing(key) : (await opts.bucket.head(key))?.size;
  const metadata = { ...opts.labels.metadata, records: String(spooled.records) };
  if (existing !== spooled.size) {
    await opts.bucket.uploadFile(key, spooled.file, spooled.size, contentType, (id) => opts.onUploadId(key, id), opts.signal, {
      tags: opts.labels.tags,
      metadata,
    });
  } else {
    await opts.bucket.putTags(key, opts.labels.tags);
  }
  if (opts.keepIn === undefined) rmSync(spooled.file, { force: true });
  return { key, size: spooled.size, sha256: spooled.sha256, records: spooled.records, file: spooled.file };
}
