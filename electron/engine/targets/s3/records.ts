/**
 * JSON Lines in and out of S3 objects, streamed: an object is never held in memory whole.
 */
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { S3Bucket } from './bucket.ts';

/** Splits a byte stream into its non-blank lines (without the newline; a final line without one counts). */
export async function* lines(stream: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  let rest = '';
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for await (const chunk of stream) {
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const line = text.slice(start, nl);
      start = nl + 1;
      if (line.trim() !== '') yield line.endsWith('\r') ? line.slice(0, -1) : line;
    }
    rest = text.slice(start);
  }
  rest += decoder.decode();
  if (rest.trim() !== '') yield rest.endsWith('\r') ? rest.slice(0, -1) : rest;
}

/**
 * Records as they travel from a source to a writer: `data` holds `count` records, each a line
 * of UTF-8 ending with a newline. Bytes in blocks, not one string per record: a million rows
 * make neither a million strings and promises nor megabytes of text on the JavaScript heap,
 * whose young generation would grow with them (bench (e), (j)).
 */
export interface RecordBlock {
  data: Buffer;
  count: number;
}

const BLOCK_CHARS = 256 * 1024;

/** Records gathered into blocks of about 256 KB. */
export async function* blocksOf(records: AsyncIterable<string>): AsyncGenerator<RecordBlock> {
  let batch: string[] = [];
  let chars = 0;
  for await (const record of records) {
    batch.push(record);
    chars += record.length + 1;
    if (chars >= BLOCK_CHARS) {
      yield { data: Buffer.from(`${batch.join('\n')}\n`), count: batch.length };
      batch = [];
      chars = 0;
    }
  }
  if (batch.length > 0) yield { data: Buffer.from(`${batch.join('\n')}\n`), count: batch.length };
}

export const NEWLINE = 0x0a;

/** Where the `n`th line of `data` ends (the index of its newline); n ≥ 1, and data holds that many. */
export function endOfLine(data: Buffer, n: number): number {
  let at = -1;
  for (let i = 0; i < n; i++) at = data.indexOf(NEWLINE, at + 1);
  return at;
}

/** Newlines in `data`. */
export function countLines(data: Buffer): number {
  let n = 0;
  for (let at = data.indexOf(NEWLINE); at !== -1; at = data.indexOf(NEWLINE, at + 1)) n += 1;
  return n;
}

/** A record that is not one JSON value per line: names the object and the line. */
export class BadRecordError extends Error {
  override readonly name = 'BadRecordError';
}

export interface ObjectRef {
  key: string;
  size: number;
  /** when the object was found by listing */
  etag?: string;
}

export interface ReadCounts {
  objects: number;
  bytes: number;
  records: number;
}

/**
 * The records of `objects`, in order, each line checked to be one JSON value. `counts` grows
 * as they are read. Gzip is taken from `gzip`, or from the key's `.gz` when it is undefined.
 */
export async function* readRecords(
  bucket: S3Bucket,
  objects: readonly ObjectRef[],
  gzip: boolean | undefined,
  counts: ReadCounts,
  signal?: AbortSignal,
): AsyncGenerator<string> {
  for (const object of objects) {
    const body = await bucket.getStream(object.key, signal);
    const unzip = gzip ?? object.key.endsWith('.gz');
    const stream: Readable = unzip ? body.pipe(createGunzip()) : body;
    if (unzip) body.on('error', (err) => stream.destroy(err));
    let line = 0;
    try {
      for await (const record of lines(stream)) {
        line += 1;
        try {
          JSON.parse(record);
        } catch (err) {
          throw new BadRecordError(
            `${bucket.url(object.key)} line ${line} is not JSON (${(err as Error).message}): every line must be one JSON record`,
          );
        }
        counts.records += 1;
        yield record;
      }
    } catch (err) {
      if ((err as { code?: string }).code === 'Z_DATA_ERROR') {
        throw new BadRecordError(`${bucket.url(object.key)} is not gzip (${(err as Error).message}): set gzip: false on the source`);
      }
      if (err instanceof TypeError && /encoded data was not valid/.test(err.message)) {
        throw new BadRecordError(
          `${bucket.url(object.key)} is not UTF-8 text${unzip ? '' : ' (is it gzipped? set gzip: true on the source)'}`,
        );
      }
      throw err;
    } finally {
      body.destroy();
    }
    counts.objects += 1;
    counts.bytes += object.size;
  }
}
