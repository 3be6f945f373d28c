/**
 * The Parquet writer of pgParquet.ts on its own: a binary COPY stream built here by hand (the
 * format of Postgres's docs, not the product's code), cut into chunks of every size, written
 * as Parquet files, and read back by DuckDB, value for value. No server.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { duckTypeOfPg } from '../../electron/engine/targets/s3/lakeSql.ts';
import { BinaryCopyError, parquetColumnOf, writeParquetFiles, type ParquetColumn } from '../../electron/engine/targets/s3/pgParquet.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Cell = Buffer | null;

/** Postgres's binary COPY: signature, flags, extension, rows of (int16 n, (int32 len, bytes)*), trailer -1. */
function binaryCopy(rows: readonly Cell[][]): Buffer {
  const parts: Buffer[] = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(4), Buffer.from([0, 0, 0, 4, 9, 9, 9, 9])];
  for (const row of rows) {
    const n = Buffer.alloc(2);
    n.writeInt16BE(row.length);
    parts.push(n);
    for (const cell of row) {
      const len = Buffer.alloc(4);
      len.writeInt32BE(cell === null ? -1 : cell.length);
      parts.push(len);
      if (cell) parts.push(cell);
    }
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

const be = {
  int2: (v: number) => Buffer.from([(v >> 8) & 0xff, v & 0xff]),
  int4: (v: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    return b;
  },
  int8: (v: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(v);
    return b;
  },
  float8: (v: number) => {
    const b = Buffer.alloc(8);
    b.writeDoubleBE(v);
    return b;
  },
  bool: (v: boolean) => Buffer.from([v ? 1 : 0]),
};

function chunked(data: Buffer, size: number): AsyncIterable<Buffer> {
  const chunks: Buffer[] = [];
  for (let at = 0; at < data.length; at += size) chunks.push(data.subarray(at, at + size));
  return toAsync(chunks);
}

/** An iterable as an async one (as the COPY stream is). */
async function* toAsync(items: Iterable<Buffer>): AsyncGenerator<Buffer> {
  for (const item of items) yield await Promise.resolve(item);
}

async function readBack(files: string[], sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    await c.run(`CREATE VIEW source AS SELECT * FROM read_parquet([${files.map((f) => `'${f}'`).join(', ')}])`);
    return (await c.runAndReadAll(sql)).getRowObjectsJson();
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

const column = (name: string, pgType: string): ParquetColumn => {
  const c = parquetColumnOf(name, pgType, `q."${name}"`);
  if (!c) throw new Error(pgType);
  return c;
};

async function write(
  data: AsyncIterable<Buffer>,
  columns: ParquetColumn[],
  opts: { recordsPerObject?: number; rowGroupSize?: number; codec?: 'zstd' | 'gzip' | 'uncompressed' } = {},
): Promise<{ files: string[]; rows: number; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'bfr-pq-unit-'));
  dirs.push(dir);
  const files: string[] = [];
  const rows = await writeParquetFiles(
    data,
    columns,
    { codec: opts.codec ?? 'zstd', rowGroupSize: opts.rowGroupSize ?? 122_880 },
    opts.recordsPerObject ?? 1_000_000,
    dir,
    new AbortController().signal,
    (spooled) => {
      files.push(spooled.file);
      return Promise.resolve();
    },
  );
  return { files, rows, dir };
}

describe('Parquet from binary COPY', () => {
  // every type, NULLs in each column at a different rhythm, the epochs' and infinities' edges
  const N = 3000;
  const rows: Cell[][] = [];
  const want: Record<string, unknown>[] = [];
  for (let i = 0; i < N; i++) {
    const day = i === 1 ? 0x7fffffff : i === 2 ? -0x80000000 : i * 37 - 40_000;
    const micros = i === 1 ? 0x7fffffffffffffffn : i === 2 ? -0x8000000000000000n : BigInt(i) * 3_600_000_001n - 10n ** 12n;
    const text = i % 7 === 0 ? '' : `ü${'x'.repeat(i % 50)}${i}`;
    rows.push([
      i % 11 === 0 ? null : be.int2((i % 65535) - 32767),
      be.int4(i * 7919 - 1_000_000),
      i % 13 === 0 ? null : be.int8(BigInt(i) * -1_000_000_007n),
      i % 5 === 0 ? null : be.float8(i / 3),
      i % 3 === 0 ? null : be.bool(i % 2 === 0),
      i % 17 === 0 ? null : be.int4(day),
      i % 19 === 0 ? null : be.int8(micros),
      i % 23 === 0 ? null : Buffer.from(text),
      i % 29 === 0 ? null : be.int8(BigInt(i) * 123_456_789_012n - 5n * 10n ** 17n),
      i % 31 === 0 ? null : be.int4(i * 1001 - 999_999),
    ]);
    want.push({
      s: i % 11 === 0 ? null : (i % 65535) - 32767,
      i: i * 7919 - 1_000_000,
      b: i % 13 === 0 ? null : String(BigInt(i) * -1_000_000_007n),
      d: i % 5 === 0 ? null : i / 3,
      f: i % 3 === 0 ? null : i % 2 === 0,
      dt:
        i % 17 === 0
          ? null
          : i === 1
            ? 'infinity'
            : i === 2
              ? '-infinity'
              : new Date((day + 10_957) * 86_400_000).toISOString().slice(0, 10),
      ts: i % 19 === 0 ? null : i === 1 ? 'infinity' : i === 2 ? '-infinity' : String(micros + 946_684_800_000_000n),
      t: i % 23 === 0 ? null : text,
      n18: i % 29 === 0 ? null : formatDecimal(BigInt(i) * 123_456_789_012n - 5n * 10n ** 17n, 4),
      n9: i % 31 === 0 ? null : formatDecimal(BigInt(i * 1001 - 999_999), 2),
    });
  }
  const columns = [
    column('s', 'smallint'),
    column('i', 'integer'),
    column('b', 'bigint'),
    column('d', 'double precision'),
    column('f', 'boolean'),
    column('dt', 'date'),
    column('ts', 'timestamp without time zone'),
    column('t', 'character varying(80)'),
    column('n18', 'numeric(18,4)'),
    column('n9', 'numeric(9,2)'),
  ];
  const data = binaryCopy(rows);
  const SELECT = `select s, i, b::varchar as b, d, f, dt::varchar as dt,
      case when isinf(ts) then ts::varchar else epoch_us(ts)::varchar end as ts, t, n18::varchar as n18, n9::varchar as n9 from source`;

  it.each([1, 7, 4096, data.length])('chunks of %i bytes: every value read back by DuckDB', async (size) => {
    const { files, rows: n } = await write(chunked(data, size), columns, { recordsPerObject: 1000, rowGroupSize: 256 });
    expect(n).toBe(N);
    expect(files.length).toBe(3);
    expect(await readBack(files, SELECT)).toEqual(want);
  });

  it("each row group's null count, min and max are its own, as DuckDB reads them", async () => {
    const { files } = await write(chunked(data, 65_536), columns, { recordsPerObject: 1000, rowGroupSize: 256 });
    const stats = await readBack(
      files,
      `select file_name as file, row_group_id as rg, path_in_schema as col, stats_min_value as lo, stats_max_value as hi, stats_null_count::int as nulls
         from parquet_metadata([${files.map((f) => `'${f}'`).join(', ')}]) order by all`,
    );
    const names = columns.map((c) => c.schema.name);
    const want = await readBack(
      files,
      `select * from (${names
        .map(
          (n) => `select filename as file, (file_row_number // 256)::bigint as rg, '${n}' as col,
              ${['t'].includes(n) ? 'NULL' : `min(${n})::varchar`} as lo, ${['t'].includes(n) ? 'NULL' : `max(${n})::varchar`} as hi,
              (count(*) - count(${n}))::int as nulls
            from read_parquet([${files.map((f) => `'${f}'`).join(', ')}], filename = true, file_row_number = true) group by all`,
        )
        .join(' union all ')}) order by all`,
    );
    expect(stats.length).toBe(files.length * 4 * names.length);
    expect(stats).toEqual(want);
  });

  it.each(['gzip', 'uncompressed'] as const)('codec %s', async (codec) => {
    const { files } = await write(chunked(data, 65_536), columns, { codec });
    expect(await readBack(files, SELECT)).toEqual(want);
  });

  it('pages cut by rows and by bytes, NULL runs across them, booleans across bytes', async () => {
    const many = 250_001;
    const big = 'y'.repeat(300_000);
    const rowsOf = function* (): Generator<Cell[]> {
      for (let i = 0; i < many; i++)
        yield [i % 1000 < 500 ? null : be.int4(i), be.bool(i % 3 === 0), i % 40_000 === 0 ? Buffer.from(big) : null];
    };
    function* stream(): Generator<Buffer> {
      let batch: Cell[][] = [];
      const header = binaryCopy([]);
      yield header.subarray(0, header.length - 2);
      for (const r of rowsOf()) {
        batch.push(r);
        if (batch.length === 10_000) {
          const b = binaryCopy(batch);
          yield b.subarray(header.length - 2, b.length - 2);
          batch = [];
        }
      }
      const b = binaryCopy(batch);
      yield b.subarray(header.length - 2);
    }
    const { files } = await write(toAsync(stream()), [column('v', 'integer'), column('f', 'boolean'), column('t', 'text')], {
      rowGroupSize: 200_000,
    });
    const [got] = await readBack(
      files,
      `select count(*)::int as n, count(v)::int as v, sum(v)::varchar as total, count(*) filter (where f)::int as f,
              count(t)::int as t, min(length(t))::int as tl from source`,
    );
    let total = 0n;
    let v = 0;
    for (let i = 0; i < many; i++) {
      if (i % 1000 >= 500) {
        total += BigInt(i);
        v += 1;
      }
    }
    expect(got).toEqual({ n: many, v, total: String(total), f: Math.ceil(many / 3), t: 7, tl: 300_000 });
    // row by row too, where the pages turn
    const sample = await readBack(files, `select v, f from source limit 10 offset 99995`);
    expect(sample).toEqual(Array.from({ length: 10 }, (_, k) => 99_995 + k).map((i) => ({ v: i % 1000 < 500 ? null : i, f: i % 3 === 0 })));
  });

  it('a field of many chunks is read whole (joined once, not chunk after chunk)', async () => {
    const big = Buffer.alloc(5_000_000, 'z');
    big.write('start', 0);
    big.write('end', big.length - 3);
    const copy = binaryCopy([
      [be.int4(1), Buffer.from('a')],
      [be.int4(2), big],
      [be.int4(3), null],
    ]);
    const { files } = await write(chunked(copy, 65_536), [column('i', 'integer'), column('t', 'text')]);
    expect(await readBack(files, `select i, length(t)::int as n, left(t, 5) as head, right(t, 3) as tail from source order by i`)).toEqual([
      { i: 1, n: 1, head: 'a', tail: 'a' },
      { i: 2, n: 5_000_000, head: 'start', tail: 'end' },
      { i: 3, n: null, head: null, tail: null },
    ]);
  });

  it("a timestamp past DuckDB's last one is an error naming the column; the last one itself is kept", async () => {
    const shift = 946_684_800_000_000n;
    const last = 0x7fffffffffffffffn - 1n - shift;
    const ok = await write(chunked(binaryCopy([[be.int8(last)]]), 4096), [column('ts', 'timestamp without time zone')]);
    expect(await readBack(ok.files, 'select ts::varchar as ts from source')).toEqual([{ ts: '294247-01-10 04:00:54.775806' }]);
    for (const micros of [last + 1n, 9_223_371_331_199_999_999n]) {
      await expect(write(chunked(binaryCopy([[be.int8(micros)]]), 4096), [column('ts', 'timestamp with time zone')])).rejects.toThrow(
        /column "ts" holds a timestamp after 294247-01-10 04:00:54.775806/,
      );
    }
  });

  it('no rows: no file', async () => {
    const { files, rows: n } = await write(chunked(binaryCopy([]), 5), columns);
    expect([n, files]).toEqual([0, []]);
  });

  it('a stream cut short, or a row of the wrong width, is an error and leaves no file behind', async () => {
    const cut = data.subarray(0, data.length - 1000);
    const dir = mkdtempSync(join(tmpdir(), 'bfr-pq-unit-'));
    dirs.push(dir);
    await expect(
      writeParquetFiles(
        chunked(cut, 4096),
        columns,
        { codec: 'zstd', rowGroupSize: 1000 },
        10_000,
        dir,
        new AbortController().signal,
        async () => {},
      ),
    ).rejects.toThrow(BinaryCopyError);
    expect(readdirSync(dir)).toEqual([]);
    await expect(write(chunked(binaryCopy([[be.int4(1)]]), 3), columns)).rejects.toThrow(/has 1 fields, not 10/);
    await expect(write(chunked(Buffer.from('id,name\n1,x\n'.repeat(3)), 8), columns)).rejects.toThrow(/did not send binary COPY/);
  });

  it('leaves to DuckDB what it does not write itself', () => {
    for (const t of [
      'json',
      'jsonb',
      'numeric',
      'numeric(20,2)',
      'numeric(3,5)',
      'numeric(3,-2)',
      'interval',
      'integer[]',
      'bytea',
      'time without time zone',
    ]) {
      expect(parquetColumnOf('x', t, 'q."x"'), t).toBeUndefined();
    }
    // and DuckDB keeps a scale above the precision (Postgres 15+) as text, not as a DECIMAL it rejects
    expect([duckTypeOfPg('numeric(3,5)'), duckTypeOfPg('numeric(3,-2)'), duckTypeOfPg('numeric(18,4)')]).toEqual([
      'VARCHAR',
      'VARCHAR',
      'DECIMAL(18,4)',
    ]);
  });
});

function formatDecimal(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
