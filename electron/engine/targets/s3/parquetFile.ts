/**
 * A Parquet file written column by column from values already in their Parquet PLAIN form:
 * no JS value per cell, one growing buffer per column (pgParquet.ts fills them from Postgres's
 * binary COPY). Format: https://parquet.apache.org/docs/file-format/ and parquet.thrift.
 *
 * - Every column is OPTIONAL (as DuckDB writes them); definition levels are one RLE run when a
 *   page has no NULL, else one bit-packed run (RLE/bit-packing hybrid, bit width 1).
 * - Values are PLAIN; pages are v1 data pages of about PAGE_BYTES of values, compressed whole.
 * - A row group's compressed pages stay in memory until the group ends (ROW_GROUP_BYTES at
 *   most, or the job's row_group_size rows), then go to disk column after column.
 * - The footer (FileMetaData) is Thrift's compact protocol, written by the few lines below.
 * - Each column chunk carries its null count and, for numbers, booleans, dates and timestamps,
 *   its min and max (read back from the page buffer, no JS value kept), so readers can skip
 *   row groups; strings and UUIDs carry the null count only. No dictionary pages: files are
 *   somewhat larger than DuckDB's dictionary-encoded ones.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';

/** Parquet physical types (parquet.thrift `Type`). */
export const PhysicalType = { BOOLEAN: 0, INT32: 1, INT64: 2, FLOAT: 4, DOUBLE: 5, BYTE_ARRAY: 6, FIXED_LEN_BYTE_ARRAY: 7 } as const;
/** parquet.thrift `ConvertedType`. */
export const ConvertedType = { UTF8: 0, DECIMAL: 5, DATE: 6, TIMESTAMP_MICROS: 10, INT_16: 16, INT_32: 17, INT_64: 18 } as const;
/** parquet.thrift `CompressionCodec`. */
export const Codec = { UNCOMPRESSED: 0, SNAPPY: 1, GZIP: 2, ZSTD: 6 } as const;

export type LogicalType = { kind: 'timestamp'; utc: boolean } | { kind: 'decimal'; scale: number; precision: number } | { kind: 'uuid' };

export interface ColumnSchema {
  name: string;
  type: (typeof PhysicalType)[keyof typeof PhysicalType];
  typeLength?: number;
  converted?: (typeof ConvertedType)[keyof typeof ConvertedType];
  scale?: number;
  precision?: number;
  logical?: LogicalType;
}

const ENCODING_PLAIN = 0;
const ENCODING_RLE = 3;
const REPETITION_REQUIRED = 0;
const REPETITION_OPTIONAL = 1;

/** Values per page before it is compressed (a page is also cut at PAGE_ROWS rows). */
const PAGE_BYTES = 1024 * 1024;
const PAGE_ROWS = 100_000;
/** Compressed pages a row group may hold in memory before it is written out. */
const ROW_GROUP_BYTES = 64 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Thrift compact protocol (only what the footer and page headers need)

const T_TRUE = 1;
const T_FALSE = 2;
const T_I32 = 5;
const T_I64 = 6;
const T_BINARY = 8;
const T_LIST = 9;
const T_STRUCT = 12;

class Compact {
  private bytes: number[] = [];
  private last: number[] = [0];

  private varint(v: bigint): void {
    let x = v;
    while (x >= 0x80n) {
      this.bytes.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.bytes.push(Number(x));
  }

  private zigzag(v: bigint | number): void {
    const x = BigInt(v);
    this.varint(x >= 0n ? x << 1n : (-x << 1n) - 1n);
  }

  private field(id: number, type: number): void {
    const delta = id - (this.last[this.last.length - 1] ?? 0);
    if (delta > 0 && delta <= 15) this.bytes.push((delta << 4) | type);
    else {
      this.bytes.push(type);
      this.zigzag(id);
    }
    this.last[this.last.length - 1] = id;
  }

  i32(id: number, v: number): this {
    this.field(id, T_I32);
    this.zigzag(v);
    return this;
  }

  i64(id: number, v: number | bigint): this {
    this.field(id, T_I64);
    this.zigzag(v);
    return this;
  }

  bool(id: number, v: boolean): this {
    this.field(id, v ? T_TRUE : T_FALSE);
    return this;
  }

  string(id: number, s: string): this {
    this.field(id, T_BINARY);
    this.binary(Buffer.from(s, 'utf8'));
    return this;
  }

  blob(id: number, b: Buffer): this {
    this.field(id, T_BINARY);
    this.binary(b);
    return this;
  }

  private binary(b: Buffer): void {
    this.varint(BigInt(b.length));
    for (const byte of b) this.bytes.push(byte);
  }

  struct(id: number, body: (w: this) => void): this {
    this.field(id, T_STRUCT);
    this.inStruct(body);
    return this;
  }

  private inStruct(body: (w: this) => void): void {
    this.last.push(0);
    body(this);
    this.bytes.push(0);
    this.last.pop();
  }

  private listHeader(id: number, size: number, elem: number): void {
    this.field(id, T_LIST);
    if (size < 15) this.bytes.push((size << 4) | elem);
    else {
      this.bytes.push(0xf0 | elem);
      this.varint(BigInt(size));
    }
  }

  structs<T>(id: number, items: readonly T[], body: (w: this, item: T, index: number) => void): this {
    this.listHeader(id, items.length, T_STRUCT);
    items.forEach((item, i) => this.inStruct((w) => body(w, item, i)));
    return this;
  }

  i32s(id: number, items: readonly number[]): this {
    this.listHeader(id, items.length, T_I32);
    for (const v of items) this.zigzag(v);
    return this;
  }

  strings(id: number, items: readonly string[]): this {
    this.listHeader(id, items.length, T_BINARY);
    for (const s of items) this.binary(Buffer.from(s, 'utf8'));
    return this;
  }

  /** The top-level struct's bytes (with its stop byte). */
  end(): Buffer {
    this.bytes.push(0);
    return Buffer.from(this.bytes);
  }
}

// ---------------------------------------------------------------------------------------------
// Columns

/** Where a column's values of the page in progress go, in PLAIN form. */
export class ColumnSink {
  /** PLAIN values of the page in progress */
  values: Buffer = Buffer.allocUnsafe(64 * 1024);
  length = 0;
  /** definition levels of the page's rows, one bit each (1 = a value) */
  private defs = new Uint8Array(PAGE_ROWS / 8 + 1);
  private rows = 0;
  private nulls = 0;
  /** BOOLEAN only: values are bits, LSB first */
  private bits = 0;

  // the column chunk of the row group in progress
  pages: Buffer[] = [];
  chunkBytes = 0;
  chunkUncompressed = 0;
  chunkValues = 0;
  chunkNulls = 0;
  /**
   * min and max of the chunk's values, without an object per value: the value itself, or an
   * INT64's high (signed) and low (unsigned) words; NaN spoils a float column's.
   */
  private seen = false;
  private minHi = 0;
  private minLo = 0;
  private maxHi = 0;
  private maxLo = 0;
  private spoiled = false;

  constructor(
    readonly schema: ColumnSchema,
    private readonly compress: (page: Buffer) => Buffer,
    private readonly codec: number,
  ) {}

  /** Room for `n` more bytes of values; returns the offset to write them at (then advance `length`). */
  reserve(n: number): number {
    if (this.length + n > this.values.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.values.length * 2, this.length + n));
      this.values.copy(grown, 0, 0, this.length);
      this.values = grown;
    }
    return this.length;
  }

  /** One row's definition: a value (already appended) or NULL. */
  row(defined: boolean): void {
    if (defined) {
      this.defs[this.rows >> 3] = (this.defs[this.rows >> 3] ?? 0) | (1 << (this.rows & 7));
      this.observe();
    } else this.nulls += 1;
    this.rows += 1;
    if (this.length >= PAGE_BYTES || this.rows >= PAGE_ROWS) this.flushPage();
  }

  /** The value just appended, into the chunk's min and max (read back from the page buffer). */
  private observe(): void {
    const v = this.values;
    let hi: number;
    let lo = 0;
    switch (this.schema.type) {
      case PhysicalType.INT32:
        hi = v.readInt32LE(this.length - 4);
        break;
      case PhysicalType.INT64:
        hi = v.readInt32LE(this.length - 4);
        lo = v.readUInt32LE(this.length - 8);
        break;
      case PhysicalType.FLOAT:
      case PhysicalType.DOUBLE:
        hi = this.schema.type === PhysicalType.FLOAT ? v.readFloatLE(this.length - 4) : v.readDoubleLE(this.length - 8);
        if (Number.isNaN(hi)) {
          this.spoiled = true;
          return;
        }
        break;
      case PhysicalType.BOOLEAN: {
        const bit = this.bits - 1;
        hi = ((v[bit >> 3] ?? 0) >> (bit & 7)) & 1;
        break;
      }
      case PhysicalType.BYTE_ARRAY:
      case PhysicalType.FIXED_LEN_BYTE_ARRAY:
        // null count only
        return;
    }
    if (!this.seen) {
      this.seen = true;
      this.minHi = this.maxHi = hi;
      this.minLo = this.maxLo = lo;
      return;
    }
    if (hi < this.minHi || (hi === this.minHi && lo < this.minLo)) {
      this.minHi = hi;
      this.minLo = lo;
    }
    if (hi > this.maxHi || (hi === this.maxHi && lo > this.maxLo)) {
      this.maxHi = hi;
      this.maxLo = lo;
    }
  }

  /** The chunk's statistics (null count; min and max as PLAIN bytes where kept), and a fresh start. */
  takeStatistics(): { nulls: number; min?: Buffer; max?: Buffer } {
    const out: { nulls: number; min?: Buffer; max?: Buffer } = { nulls: this.chunkNulls };
    if (this.seen && !this.spoiled) {
      out.min = this.plain(this.minHi, this.minLo, 'min');
      out.max = this.plain(this.maxHi, this.maxLo, 'max');
    }
    this.chunkNulls = 0;
    this.seen = false;
    this.spoiled = false;
    return out;
  }

  private plain(hi: number, lo: number, end: 'min' | 'max'): Buffer {
    switch (this.schema.type) {
      case PhysicalType.INT64: {
        const b = Buffer.allocUnsafe(8);
        b.writeUInt32LE(lo, 0);
        b.writeInt32LE(hi, 4);
        return b;
      }
      case PhysicalType.INT32: {
        const b = Buffer.allocUnsafe(4);
        b.writeInt32LE(hi, 0);
        return b;
      }
      case PhysicalType.BOOLEAN:
        return Buffer.of(hi);
      case PhysicalType.FLOAT:
      case PhysicalType.DOUBLE: {
        // a zero bound is written -0.0 as a min and +0.0 as a max (parquet.thrift, Statistics)
        const n = hi === 0 ? (end === 'min' ? -0 : 0) : hi;
        const b = Buffer.allocUnsafe(this.schema.type === PhysicalType.FLOAT ? 4 : 8);
        if (this.schema.type === PhysicalType.FLOAT) b.writeFloatLE(n, 0);
        else b.writeDoubleLE(n, 0);
        return b;
      }
      case PhysicalType.BYTE_ARRAY:
      case PhysicalType.FIXED_LEN_BYTE_ARRAY:
        throw new Error('no min or max is kept for byte arrays');
    }
  }

  /** A BOOLEAN value (PLAIN booleans are bit-packed). */
  boolean(v: boolean): void {
    const byte = this.bits >> 3;
    if ((this.bits & 7) === 0) {
      this.reserve(1);
      this.values[byte] = 0;
      this.length = byte + 1;
    }
    if (v) this.values[byte] = (this.values[byte] ?? 0) | (1 << (this.bits & 7));
    this.bits += 1;
  }

  /** The page in progress, compressed, onto the column chunk. */
  flushPage(): void {
    if (this.rows === 0) return;
    const levels = this.definitionLevels();
    const body = Buffer.allocUnsafe(4 + levels.length + this.length);
    body.writeUInt32LE(levels.length, 0);
    levels.copy(body, 4);
    this.values.copy(body, 4 + levels.length, 0, this.length);
    const compressed = this.codec === Codec.UNCOMPRESSED ? body : this.compress(body);
    const header = new Compact()
      .i32(1, 0) // DATA_PAGE
      .i32(2, body.length)
      .i32(3, compressed.length)
      .struct(5, (w) => w.i32(1, this.rows).i32(2, ENCODING_PLAIN).i32(3, ENCODING_RLE).i32(4, ENCODING_RLE))
      .end();
    this.pages.push(header, compressed);
    this.chunkBytes += header.length + compressed.length;
    this.chunkUncompressed += header.length + body.length;
    this.chunkValues += this.rows;
    this.chunkNulls += this.nulls;
    this.defs.fill(0, 0, (this.rows >> 3) + 1);
    this.rows = 0;
    this.nulls = 0;
    this.bits = 0;
    this.length = 0;
  }

  private definitionLevels(): Buffer {
    if (this.nulls === 0) {
      // one RLE run of `rows` ones
      return Buffer.concat([uleb(this.rows * 2), Buffer.of(1)]);
    }
    // one bit-packed run of groups of 8 (the last group padded with zeros)
    const groups = Math.ceil(this.rows / 8);
    return Buffer.concat([uleb(groups * 2 + 1), Buffer.from(this.defs.buffer, this.defs.byteOffset, groups)]);
  }
}

function uleb(v: number): Buffer {
  const out: number[] = [];
  let x = v;
  while (x >= 0x80) {
    out.push((x & 0x7f) | 0x80);
    x = Math.floor(x / 128);
  }
  out.push(x);
  return Buffer.from(out);
}

interface RowGroupMeta {
  columns: { offset: number; bytes: number; uncompressed: number; values: number; stats: ReturnType<ColumnSink['takeStatistics']> }[];
  rows: number;
}

/**
 * One Parquet file on disk. `sinks` take the values of each row (the caller appends to each and
 * calls `row`), then `endRow()`; `finish()` writes the footer and closes the file.
 */
export class ParquetFile {
  readonly sinks: ColumnSink[];
  rows = 0;
  private groupRows = 0;
  private offset = 0;
  private readonly fd: number;
  private closed = false;
  /** the file's sha256, taken as it is written (its object's name: paths.dataObjectKey) */
  private readonly hash = createHash('sha256');
  private readonly groups: RowGroupMeta[] = [];

  constructor(
    readonly path: string,
    private readonly columns: readonly ColumnSchema[],
    private readonly codec: number,
    compress: (page: Buffer) => Buffer,
    private readonly rowGroupSize: number,
    private readonly createdBy: string,
  ) {
    this.fd = openSync(path, 'w');
    this.sinks = columns.map((c) => new ColumnSink(c, compress, codec));
    try {
      this.write(Buffer.from('PAR1'));
    } catch (err) {
      this.abandon();
      throw err;
    }
  }

  endRow(): void {
    this.rows += 1;
    this.groupRows += 1;
    // the held bytes only grow by a page at a time: summed every 1,024 rows, not every row
    if (this.groupRows >= this.rowGroupSize || ((this.groupRows & 1023) === 0 && this.heldBytes() >= ROW_GROUP_BYTES)) this.endGroup();
  }

  private heldBytes(): number {
    let n = 0;
    for (const s of this.sinks) n += s.chunkBytes + s.length;
    return n;
  }

  private endGroup(): void {
    if (this.groupRows === 0) return;
    const columns: RowGroupMeta['columns'] = [];
    for (const sink of this.sinks) {
      sink.flushPage();
      const offset = this.offset;
      for (const page of sink.pages) this.write(page);
      columns.push({
        offset,
        bytes: sink.chunkBytes,
        uncompressed: sink.chunkUncompressed,
        values: sink.chunkValues,
        stats: sink.takeStatistics(),
      });
      sink.pages = [];
      sink.chunkBytes = 0;
      sink.chunkUncompressed = 0;
      sink.chunkValues = 0;
    }
    this.groups.push({ columns, rows: this.groupRows });
    this.groupRows = 0;
  }

  /** The last row group, the footer and the closing magic; closes the file. Returns its size and sha256, taken as it was written. */
  finish(): { file: string; size: number; sha256: string; records: number } {
    try {
      this.endGroup();
      const footer = this.footer();
      const length = Buffer.allocUnsafe(4);
      length.writeUInt32LE(footer.length, 0);
      this.write(footer);
      this.write(length);
      this.write(Buffer.from('PAR1'));
      return { file: this.path, size: this.offset, sha256: this.hash.digest('hex'), records: this.rows };
    } finally {
      this.abandon();
    }
  }

  /** Closes the file (without a footer unless finish wrote it; the caller removes it). Once. */
  abandon(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  private footer(): Buffer {
    const w = new Compact();
    w.i32(1, 1); // version
    w.structs(2, [undefined, ...this.columns], (s, c) => {
      if (c === undefined) {
        s.i32(3, REPETITION_REQUIRED).string(4, 'duckdb_schema').i32(5, this.columns.length);
        return;
      }
      s.i32(1, c.type);
      if (c.typeLength !== undefined) s.i32(2, c.typeLength);
      s.i32(3, REPETITION_OPTIONAL).string(4, c.name);
      if (c.converted !== undefined) s.i32(6, c.converted);
      if (c.scale !== undefined) s.i32(7, c.scale);
      if (c.precision !== undefined) s.i32(8, c.precision);
      const logical = c.logical;
      if (logical) s.struct(10, (l) => logicalType(l, logical));
    });
    w.i64(3, this.rows);
    w.structs(4, this.groups, (g, group) => {
      g.structs(1, group.columns, (cc, chunk, i) => {
        const schema = this.columns[i] as ColumnSchema;
        cc.i64(2, chunk.offset);
        cc.struct(3, (m) =>
          m
            .i32(1, schema.type)
            .i32s(2, [ENCODING_PLAIN, ENCODING_RLE])
            .strings(3, [schema.name])
            .i32(4, this.codec)
            .i64(5, chunk.values)
            .i64(6, chunk.uncompressed)
            .i64(7, chunk.bytes)
            .i64(9, chunk.offset)
            .struct(12, (st) => {
              st.i64(3, chunk.stats.nulls);
              if (chunk.stats.max && chunk.stats.min) st.blob(5, chunk.stats.max).blob(6, chunk.stats.min);
            }),
        );
      });
      const total = group.columns.reduce((n, c) => n + c.bytes, 0);
      g.i64(
        2,
        group.columns.reduce((n, c) => n + c.uncompressed, 0),
      )
        .i64(3, group.rows)
        .i64(5, group.columns[0]?.offset ?? 0)
        .i64(6, total);
    });
    w.string(6, this.createdBy);
    // every column ordered by its type's own order (ColumnOrder.TYPE_ORDER): how min and max compare
    w.structs(7, this.columns, (o) => o.struct(1, () => undefined));
    return w.end();
  }

  private write(bytes: Buffer): void {
    this.hash.update(bytes);
    let done = 0;
    while (done < bytes.length) done += writeSync(this.fd, bytes, done, bytes.length - done);
    this.offset += bytes.length;
  }
}

function logicalType(w: Compact, t: LogicalType): void {
  switch (t.kind) {
    case 'timestamp':
      // TIMESTAMP(isAdjustedToUTC, MICROS)
      w.struct(8, (ts) => ts.bool(1, t.utc).struct(2, (unit) => unit.struct(2, () => undefined)));
      return;
    case 'decimal':
      w.struct(5, (d) => d.i32(1, t.scale).i32(2, t.precision));
      return;
    case 'uuid':
      w.struct(14, () => undefined);
      return;
  }
}
