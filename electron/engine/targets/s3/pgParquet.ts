/**
 * Postgres rows → Parquet objects without DuckDB, for a Postgres source and a Parquet target
 * whose columns all have a type below. DuckDB's library and working memory cost a process
 * about 150 MB more (bench (j)); here a partition costs one row group of compressed pages.
 *
 * The server sends the rows with binary COPY, each column cast to the type whose binary form
 * this file reads; each field goes straight from the COPY bytes into its column's PLAIN page
 * buffer (parquetFile.ts), with no JS value per cell:
 *   int2/int4/int8/float4/float8 big-endian → little-endian; bool → a bit;
 *   date: days since 2000-01-01 → since 1970; timestamp(tz): µs since 2000 → since 1970;
 *   numeric(p ≤ 18, s): the unscaled integer, computed by the server (value × 10^s, exact);
 *   uuid: its 16 bytes; text, varchar, char(n), name: their bytes (as row_to_json has them).
 *
 * The Parquet schema is the one DuckDB writes for the same columns (lakeSql.duckTypeOfPg), the
 * rows come in the same content order as the JSON Lines path (pgJsonSource.ts), and ±infinity
 * becomes DuckDB's own ±infinity, so validation rules, S3 → Postgres loads and other engines
 * read the same table whichever path wrote it. Any other type (json, arrays, numeric without
 * a typmod or above 18 digits, intervals, …), a repeated column name or the snappy codec
 * takes the DuckDB path.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type * as ZstdWasm from '@bokuweb/zstd-wasm';
import { AbortedError } from '../../executor/errors.ts';
import { quoteIdent } from '../postgres/sql.ts';
import { contentTypeOf, type Encoding } from './lakeSql.ts';
import type { ManifestObject } from './manifest.ts';
import { uploadObject, type Spooled, type UploadOptions } from './partWriter.ts';
import { Codec, ConvertedType, ParquetFile, PhysicalType, type ColumnSchema, type ColumnSink } from './parquetFile.ts';

const require = createRequire(import.meta.url);

/** How one column travels: the server's expression over `q` and the decoder of its binary form. */
export interface ParquetColumn {
  schema: ColumnSchema;
  /** the select-list expression, from the quoted column reference */
  sql: string;
  /** appends one non-NULL field (`len` bytes at `at` of `buf`) to the sink */
  put: (sink: ColumnSink, buf: Buffer, at: number, len: number) => void;
}

/** 2000-01-01 (Postgres's epoch) in days and microseconds since 1970-01-01. */
const PG_EPOCH_DAYS = 10_957;
const PG_EPOCH_MICROS = 946_684_800_000_000n;
// Postgres's ±infinity (binary) and DuckDB's (date_t, timestamp_t): both paths must agree.
const INT32_MAX = 2_147_483_647;
const INT32_MIN = -2_147_483_648;
const INT64_MAX = 9_223_372_036_854_775_807n;
const INT64_MIN = -9_223_372_036_854_775_808n;

const int32 = (sink: ColumnSink, v: number): void => {
  const at = sink.reserve(4);
  sink.values.writeInt32LE(v, at);
  sink.length = at + 4;
};

const int64 = (sink: ColumnSink, v: bigint): void => {
  const at = sink.reserve(8);
  sink.values.writeBigInt64LE(v, at);
  sink.length = at + 8;
};

/** `len` bytes at `at`, reversed (big-endian → little-endian). */
const swapped = (sink: ColumnSink, buf: Buffer, at: number, len: number): void => {
  const to = sink.reserve(len);
  for (let i = 0; i < len; i++) sink.values[to + i] = buf[at + len - 1 - i] as number;
  sink.length = to + len;
};

const raw = (sink: ColumnSink, buf: Buffer, at: number, len: number): void => {
  const to = sink.reserve(len);
  buf.copy(sink.values, to, at, at + len);
  sink.length = to + len;
};

/** BYTE_ARRAY: a 4-byte little-endian length, then the bytes. */
const bytes = (sink: ColumnSink, buf: Buffer, at: number, len: number): void => {
  const to = sink.reserve(4 + len);
  sink.values.writeUInt32LE(len, to);
  buf.copy(sink.values, to + 4, at, at + len);
  sink.length = to + 4 + len;
};

const putDate = (sink: ColumnSink, buf: Buffer, at: number): void => {
  const days = buf.readInt32BE(at);
  int32(sink, days === INT32_MAX ? INT32_MAX : days === INT32_MIN ? -INT32_MAX : days + PG_EPOCH_DAYS);
};

/** Microseconds since 1970 up to DuckDB's last timestamp (294247-01-10 04:00:54.775806); INT64_MAX is its infinity. */
const LAST_MICROS = INT64_MAX - 1n;

const timestampOf =
  (name: string) =>
  (sink: ColumnSink, buf: Buffer, at: number): void => {
    const micros = buf.readBigInt64BE(at);
    if (micros === INT64_MAX) return int64(sink, INT64_MAX);
    if (micros === INT64_MIN) return int64(sink, -INT64_MAX);
    const shifted = micros + PG_EPOCH_MICROS;
    if (shifted > LAST_MICROS) {
      // Postgres goes on to 294276 AD; a Parquet (DuckDB) timestamp stops here
      throw new ParquetValueError(
        `column "${name}" holds a timestamp after 294247-01-10 04:00:54.775806, beyond what a Parquet timestamp in microseconds holds: cast or filter it in source.query`,
      );
    }
    int64(sink, shifted);
  };

const TEXT_TYPES = new Set(['text', 'character varying', 'character', 'name']);

/**
 * The column as this writer sends it, or undefined when only the DuckDB path can (see the file's
 * comment). `pgType` is format_type's name, `ref` the quoted reference to the column.
 */
export function parquetColumnOf(name: string, pgType: string, ref: string): ParquetColumn | undefined {
  const t = pgType.toLowerCase();
  const numeric = /^numeric\((\d+),(\d+)\)$/.exec(t);
  if (numeric) {
    const precision = Number(numeric[1]);
    const scale = Number(numeric[2]);
    if (precision > 18 || scale > precision) return undefined;
    const small = precision <= 9;
    return {
      schema: {
        name,
        type: small ? PhysicalType.INT32 : PhysicalType.INT64,
        converted: ConvertedType.DECIMAL,
        scale,
        precision,
        logical: { kind: 'decimal', scale, precision },
      },
      // exact: a numeric(p,s) holds at most s decimals; NaN fails the cast with the server's error
      sql: `(${ref} * 1${'0'.repeat(scale)})::${small ? 'int4' : 'int8'}`,
      put: small ? (s, b, at) => int32(s, b.readInt32BE(at)) : (s, b, at, len) => swapped(s, b, at, len),
    };
  }
  const base = t.replace(/\(\d+\)/g, '');
  switch (base) {
    case 'smallint':
      return {
        schema: { name, type: PhysicalType.INT32, converted: ConvertedType.INT_16 },
        sql: `${ref}::int2`,
        put: (s, b, at) => int32(s, b.readInt16BE(at)),
      };
    case 'integer':
      return { schema: { name, type: PhysicalType.INT32, converted: ConvertedType.INT_32 }, sql: `${ref}::int4`, put: swapped };
    case 'bigint':
      return { schema: { name, type: PhysicalType.INT64, converted: ConvertedType.INT_64 }, sql: `${ref}::int8`, put: swapped };
    case 'real':
      return { schema: { name, type: PhysicalType.FLOAT }, sql: `${ref}::float4`, put: swapped };
    case 'double precision':
      return { schema: { name, type: PhysicalType.DOUBLE }, sql: `${ref}::float8`, put: swapped };
    case 'boolean':
      return { schema: { name, type: PhysicalType.BOOLEAN }, sql: `${ref}::bool`, put: (s, b, at) => s.boolean(b[at] !== 0) };
    case 'date':
      return { schema: { name, type: PhysicalType.INT32, converted: ConvertedType.DATE }, sql: `${ref}::date`, put: putDate };
    case 'timestamp without time zone':
    case 'timestamp with time zone': {
      const utc = base === 'timestamp with time zone';
      return {
        schema: { name, type: PhysicalType.INT64, converted: ConvertedType.TIMESTAMP_MICROS, logical: { kind: 'timestamp', utc } },
        sql: `${ref}::${utc ? 'timestamptz' : 'timestamp'}`,
        put: timestampOf(name),
      };
    }
    case 'uuid':
      return {
        schema: { name, type: PhysicalType.FIXED_LEN_BYTE_ARRAY, typeLength: 16, logical: { kind: 'uuid' } },
        sql: `${ref}::uuid`,
        put: raw,
      };
    default:
      // the column itself, not ::text: char(n)'s binary form keeps its padding, as row_to_json does
      return TEXT_TYPES.has(base)
        ? { schema: { name, type: PhysicalType.BYTE_ARRAY, converted: ConvertedType.UTF8 }, sql: ref, put: bytes }
        : undefined;
  }
}

/** The columns of a source query, or undefined when one of them needs the DuckDB path. */
export function parquetColumns(columns: readonly { name: string; pgType: string }[]): ParquetColumn[] | undefined {
  if (columns.length === 0 || new Set(columns.map((c) => c.name)).size !== columns.length) return undefined;
  const out: ParquetColumn[] = [];
  for (const c of columns) {
    const column = parquetColumnOf(c.name, c.pgType, `q.${quoteIdent(c.name, 'source.query')}`);
    if (!column) return undefined;
    out.push(column);
  }
  return out;
}

/** Whether a target's codec can be written here (snappy: DuckDB's). */
export function writesCodec(parquet: Encoding['parquet']): boolean {
  return parquet.codec !== 'snappy';
}

let zstd: ((data: Buffer) => Buffer) | undefined;

async function compressorOf(codec: Encoding['parquet']['codec']): Promise<(page: Buffer) => Buffer> {
  if (codec === 'gzip') return (page) => gzipSync(page);
  if (codec !== 'zstd') return (page) => page;
  if (!zstd) {
    const z = require('@bokuweb/zstd-wasm') as typeof ZstdWasm;
    await z.init();
    zstd = (page) => {
      // DuckDB's default level
      const out = z.compress(page, 3);
      return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
    };
  }
  return zstd;
}

const CODECS = { zstd: Codec.ZSTD, gzip: Codec.GZIP, uncompressed: Codec.UNCOMPRESSED, snappy: Codec.SNAPPY } as const;
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** A value its Parquet type cannot hold. */
export class ParquetValueError extends Error {
  override readonly name = 'ParquetValueError';
}

/** A binary COPY stream that is not what `COPY … (FORMAT binary)` of these columns sends. */
export class BinaryCopyError extends Error {
  override readonly name = 'BinaryCopyError';
}

/**
 * Writes the rows of a binary COPY (`chunks`, of the select list `columns` built) as Parquet
 * objects of at most `recordsPerObject` rows, each uploaded as soon as it is complete.
 * Returns the objects with their local files (kept for validation rules) and the rows read.
 */
export async function writeParquetObjects(
  chunks: AsyncIterable<Buffer>,
  columns: readonly ParquetColumn[],
  parquet: Encoding['parquet'],
  recordsPerObject: number,
  outDir: string,
  upload: UploadOptions,
): Promise<{ objects: (ManifestObject & { file: string })[]; rows: number }> {
  const objects: (ManifestObject & { file: string })[] = [];
  const rows = await writeParquetFiles(chunks, columns, parquet, recordsPerObject, outDir, upload.signal, async (spooled) => {
    objects.push(await uploadObject(spooled, objects.length, 'parquet', contentTypeOf({ format: 'parquet' }), upload));
  });
  return { objects, rows };
}

/**
 * The files of writeParquetObjects: `part-<i>.parquet` in `outDir`, each handed to `done` once
 * complete (before the next is started). Returns the rows read. A file left unfinished (an
 * error, an abort) is removed.
 */
export async function writeParquetFiles(
  chunks: AsyncIterable<Buffer>,
  columns: readonly ParquetColumn[],
  parquet: Encoding['parquet'],
  recordsPerObject: number,
  outDir: string,
  signal: AbortSignal,
  done: (file: Spooled) => Promise<void>,
): Promise<number> {
  mkdirSync(outDir, { recursive: true });
  const compress = await compressorOf(parquet.codec);
  const schemas = columns.map((c) => c.schema);
  let file: ParquetFile | undefined;
  let files = 0;
  let rows = 0;
  const finishFile = async (): Promise<void> => {
    if (!file) return;
    const complete = file;
    // a footer that cannot be written leaves `file` set: the finally below removes it
    const spooled = complete.finish();
    file = undefined;
    files += 1;
    await done(spooled);
  };

  // The bytes of a row (or the header) not complete yet, kept as they came: joined only once
  // `need` bytes are there, so a field of many chunks is copied once, not once per chunk.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let need = 0;
  let headerRead = false;
  let ended = false;
  try {
    for await (const chunk of chunks) {
      if (signal.aborted) throw new AbortedError();
      if (ended) throw new BinaryCopyError('the binary COPY goes on after its trailer');
      if (pending.length > 0) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes < need) continue;
      }
      const buf = pending.length > 0 ? Buffer.concat(pending, pendingBytes) : chunk;
      pending = [];
      pendingBytes = 0;
      need = 0;
      let pos = 0;
      if (!headerRead) {
        if (buf.length < 19 || buf.length < 19 + buf.readUInt32BE(15)) {
          if (buf.length >= 11 && !buf.subarray(0, 11).equals(SIGNATURE)) throw new BinaryCopyError('the server did not send binary COPY');
          pending = [buf];
          pendingBytes = buf.length;
          need = buf.length < 19 ? 19 : 19 + buf.readUInt32BE(15);
          continue;
        }
        if (!buf.subarray(0, 11).equals(SIGNATURE)) throw new BinaryCopyError('the server did not send binary COPY');
        pos = 19 + buf.readUInt32BE(15);
        headerRead = true;
      }
      while (pos + 2 <= buf.length) {
        const fields = buf.readInt16BE(pos);
        if (fields === -1) {
          ended = true;
          pos += 2;
          break;
        }
        if (fields !== columns.length) throw new BinaryCopyError(`a COPY row has ${fields} fields, not ${columns.length}`);
        // the whole row first: a row split between chunks waits for the next one
        let end = pos + 2;
        let complete = true;
        for (let i = 0; i < fields; i++) {
          if (end + 4 > buf.length) {
            complete = false;
            need = end + 4 - pos;
            break;
          }
          const len = buf.readInt32BE(end);
          end += 4 + (len > 0 ? len : 0);
          if (end > buf.length) {
            complete = false;
            need = end - pos;
            break;
          }
        }
        if (!complete) break;
        file ??= new ParquetFile(
          join(outDir, `part-${files}.parquet`),
          schemas,
          CODECS[parquet.codec],
          compress,
          parquet.rowGroupSize,
          CREATED_BY,
        );
        let at = pos + 2;
        const sinks = file.sinks;
        for (let i = 0; i < fields; i++) {
          const len = buf.readInt32BE(at);
          at += 4;
          const sink = sinks[i] as ColumnSink;
          if (len < 0) sink.row(false);
          else {
            (columns[i] as ParquetColumn).put(sink, buf, at, len);
            at += len;
            sink.row(true);
          }
        }
        pos = end;
        rows += 1;
        file.endRow();
        if (file.rows >= recordsPerObject) await finishFile();
      }
      if (pos < buf.length) {
        if (ended) throw new BinaryCopyError('the binary COPY goes on after its trailer');
        pending = [buf.subarray(pos)];
        pendingBytes = buf.length - pos;
        // at least the row's field count
        need = Math.max(need, 2);
      }
    }
    if (!ended) throw new BinaryCopyError('the binary COPY ended without its trailer');
    await finishFile();
  } finally {
    if (file) {
      file.abandon();
      rmSync(file.path, { force: true });
    }
  }
  return rows;
}

const CREATED_BY = 'backfill-runbook version 0.1.0';
