/**
 * A Postgres query as a record source: the server renders each row as JSON (row_to_json, so
 * numerics keep their digits and timestamps their zone) and streams it with COPY.
 *
 * **Important**: rows are ordered by their JSON text in the "C" collation. The query's own
 * order is not guaranteed, and a rerun must write byte-identical objects (same keys, same
 * checksums); sorting by the whole row makes the output depend on the content alone.
 *
 * The server joins the ordered rows into COPY rows of about 256 KB, separated by the ASCII
 * record separator (RS, 0x1e), which JSON text never holds raw (row_to_json writes it \u001e):
 * COPY sends one message per row, and a message per record would cost the client an object
 * or two per record to parse (bench (e), (j)).
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Partition } from '../../../../shared/partitions.ts';
import type { Measures } from '../../executor/types.ts';
import { copyTo, query } from '../postgres/connect.ts';
import { prepareCopySource, setCopyParameters, type CopySource } from '../postgres/copySource.ts';
import { classifyPgError } from '../postgres/errors.ts';
import { userFirstRow, userSqlError } from '../postgres/userQuery.ts';
import { checkReadOnlySelect } from '../../sql/readOnlySelect.ts';
import type { ClientPool } from '../postgres/pool.ts';
import { quoteIdent } from '../postgres/sql.ts';
import { measureSourceSql, sourceAsTable } from '../postgres/statements.ts';
import type { Lake, PartitionValues } from './lakeSession.ts';
import { duckTypeOfPg, readerSql, DEFAULT_CSV } from './lakeSql.ts';
import { countLines, NEWLINE, type RecordBlock } from './records.ts';
import { parquetColumns, type ParquetColumn } from './pgParquet.ts';
import type { LakeRelation, RecordSource, RecordStream, SourceCounts } from './sources.ts';

export class PostgresRecordSource implements RecordSource {
  private copySource: CopySource | undefined;
  /** the same rows for DuckDB's JSON reader (numerics as strings, see prepare) */
  private spoolSource: CopySource | undefined;
  /** The query's columns as DuckDB types: JSON Lines written from its rows read back exactly. */
  private columns: { name: string; type: string; pgType: string }[] = [];
  /** The same rows, for the Parquet writer (pgParquet.ts), prepared on first use: null when it cannot take them. */
  private parquet: { columns: ParquetColumn[]; copySource: CopySource } | null | undefined;

  constructor(
    private readonly pool: ClientPool,
    private readonly sourceQuery: string,
    readonly label: string,
    /** `job "name"`, for errors naming where a SQL text came from */
    private readonly where: string = 'the job',
  ) {}

  async prepare(): Promise<void> {
    if (this.copySource) return;
    const origin = { field: 'source.query', where: this.where };
    await checkReadOnlySelect(this.sourceQuery, origin);
    this.columns = await this.pool.read(async (c) => {
      const probe = await query(
        c,
        `SELECT * FROM ${sourceAsTable(this.sourceQuery)} LIMIT 0`,
        params({ key: '', start: '1970-01-01T00:00:00Z', end: '1970-01-01T00:00:00Z' }),
      ).catch((err: unknown) => {
        throw userSqlError(err, origin, this.sourceQuery);
      });
      const types = await query<{ t: string }>(
        c,
        // a domain as its base type (one level), so a domain over numeric or integer keeps its type
        `SELECT CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod) ELSE format_type(f.oid, f.mod) END AS t
           FROM unnest(CAST(:oids AS oid[]), CAST(:mods AS int[])) WITH ORDINALITY AS f(oid, mod, n)
           LEFT JOIN pg_catalog.pg_type AS t ON t.oid = f.oid ORDER BY f.n`,
        {
          oids: `{${probe.fields.map((f) => f.dataTypeID).join(',')}}`,
          mods: `{${probe.fields.map((f) => f.dataTypeModifier).join(',')}}`,
        },
      );
      return probe.fields.map((f, i) => {
        const pgType = types.rows[i]?.t ?? 'text';
        return { name: f.name, type: duckTypeOfPg(pgType), pgType };
      });
    });
    this.copySource = await this.pool.read((c) => prepareCopySource(c, this.orderedRows(), 'src.j'));
    // DuckDB reads every JSON number through a double: numerics travel to it as strings.
    const names = new Set(this.columns.map((c) => c.name));
    const exact = this.columns.some((c) => NUMERIC.test(c.pgType)) && names.size === this.columns.length;
    this.spoolSource = exact
      ? await this.pool.read((c) => prepareCopySource(c, this.orderedRows(this.numericsAsText()), 'src.j'))
      : this.copySource;
  }

  /**
   * The partition's rows in content order (see the file's comment), joined by RS into COPY rows
   * of about GROUP_BYTES each (see copyBlocks): each row's JSON object, or `item` (an expression
   * over `q`, the query's row, and `r`, numericsAsText's row) in its place, in the same order.
   */
  private orderedRows(item?: { sql: string; lateral: string }): string {
    const from = this.asQ();
    const rows = item
      ? `SELECT row_to_json(q.*)::text COLLATE "C" AS j, ${item.sql} AS a FROM ${from} CROSS JOIN LATERAL ${item.lateral}`
      : `SELECT row_to_json(q.*)::text COLLATE "C" AS j, NULL::text AS a FROM ${from}`;
    const a = item ? 'a' : 'j';
    return `SELECT string_agg(${a}, chr(30) ORDER BY j) AS j FROM (SELECT j, a, (sum(octet_length(${a})) OVER (ORDER BY j ROWS UNBOUNDED PRECEDING) - octet_length(${a})) / ${GROUP_BYTES} AS g FROM (${rows}) AS s) AS n GROUP BY g ORDER BY g`;
  }

  /** The source query as a derived table named `q`. */
  private asQ(): string {
    return sourceAsTable(this.sourceQuery).replace(/AS src$/, 'AS q');
  }

  /** The row's JSON with every numeric as a JSON string (its exact digits), the other columns as row_to_json has them. */
  private numericsAsText(): { sql: string; lateral: string } {
    const list = this.columns.map((c) => {
      const name = quoteIdent(c.name, 'source.query');
      return `${NUMERIC.test(c.pgType) ? `q.${name}::text` : `q.${name}`} AS ${name}`;
    });
    return { sql: 'row_to_json(r.*)::text', lateral: `(SELECT ${list.join(', ')}) AS r` };
  }

  /**
   * The partition's rows as a binary COPY for the Parquet writer (pgParquet.ts), in the same
   * order as `open`, with its columns; undefined when a column's type needs the DuckDB path.
   */
  async openParquet(
    partition: Partition,
    signal: AbortSignal,
  ): Promise<{ chunks: AsyncIterable<Buffer>; columns: ParquetColumn[] } | undefined> {
    if (!this.copySource) throw new Error('prepare() must run before reading partitions');
    if (this.parquet === undefined) {
      const columns = parquetColumns(this.columns);
      if (!columns) this.parquet = null;
      else {
        // the JSON path's order (see the file's comment), by the same text
        const ordered = `SELECT ${columns.map((c, i) => `${c.sql} AS c${i}`).join(', ')} FROM ${this.asQ()} ORDER BY row_to_json(q.*)::text COLLATE "C"`;
        const copySource = await this.pool.read((c) => prepareCopySource(c, ordered, 'src.*', true));
        this.parquet = { columns, copySource };
      }
    }
    if (this.parquet === null) return undefined;
    const decimals = this.columns.filter((c) => /^numeric\(/.test(c.pgType)).map((c) => `"${c.name}" ${c.pgType}`);
    const chunks = this.copyChunks(this.parquet.copySource, partition, signal);
    async function* named(): AsyncGenerator<Buffer> {
      try {
        yield* chunks;
      } catch (err) {
        // the server's words name no column (see ParquetColumn.sql for numerics)
        if (err instanceof Error && /cannot convert (NaN|-?infinity) to (integer|bigint)/i.test(err.message)) {
          throw new Error(
            `a numeric column holds NaN or infinity, which a Parquet DECIMAL cannot hold (${decimals.join(', ')}): filter it out or cast it in source.query (${err.message})`,
            { cause: err },
          );
        }
        throw err;
      }
    }
    return { chunks: named(), columns: this.parquet.columns };
  }

  /** The partition's rows spooled as JSON Lines into the session's folder, read back with their types. */
  async lakeRelation(partition: Partition, lake: Lake, _values: PartitionValues, signal: AbortSignal): Promise<LakeRelation> {
    if (!this.spoolSource) throw new Error('prepare() must run before reading partitions');
    const opening = lake.session(); // DuckDB opens while the rows spool
    opening.catch(() => undefined); // a failure to open is thrown below, once they have
    const stream = this.spool(this.spoolSource, partition, signal);
    const dir = join(lake.dir, 'source');
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'rows.json');
    await pipeline(
      Readable.from(
        (async function* () {
          for await (const block of stream.records) yield block.data;
        })(),
      ),
      createWriteStream(file),
    );
    const enc = {
      format: 'jsonl' as const,
      compression: 'none' as const,
      csv: DEFAULT_CSV,
      parquet: { codec: 'zstd' as const, rowGroupSize: 122_880 },
    };
    await (await opening).view('source', readerSql([file], enc, this.columns));
    return { select: { table: '(SELECT * FROM source)', values: [] }, counts: { objects: null, bytes: null } };
  }

  open(partition: Partition, signal: AbortSignal): Promise<RecordStream> {
    if (!this.copySource) throw new Error('prepare() must run before reading partitions');
    return Promise.resolve(this.spool(this.copySource, partition, signal));
  }

  private spool(copySource: CopySource, partition: Partition, signal: AbortSignal): RecordStream {
    let records = 0;
    const chunks = this.copyChunks(copySource, partition, signal);
    async function* rows(): AsyncGenerator<RecordBlock> {
      for await (const block of copyBlocks(chunks)) {
        records += block.count;
        yield block;
      }
    }
    return { records: rows(), counts: () => ({ records, objects: null, bytes: null }) };
  }

  /**
   * A partition's COPY, in a read-only snapshot. The connection is taken when reading starts, so
   * a partition that fails before (busy, cleanup) holds none. A consumer that stops early (abort,
   * failure) returns the generator: its finally drops the half-read COPY's connection.
   */
  private async *copyChunks(copySource: CopySource, partition: Partition, signal: AbortSignal): AsyncGenerator<Buffer> {
    if (signal.aborted) return;
    const client = await this.pool.acquire();
    let broken = true;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      await setCopyParameters(client, copySource, params(partition));
      yield* copyTo(client, copySource.copySql) as AsyncIterable<Buffer>;
      await client.query('COMMIT');
      broken = false;
    } finally {
      // a COPY abandoned half-read leaves the connection in an unknown state
      this.pool.release(client, broken);
    }
  }

  async measure(partition: Partition): Promise<SourceCounts> {
    const r = await this.pool.read((c) => query<{ rows: string }>(c, measureSourceSql(this.sourceQuery, []), params(partition)));
    return { records: Number(r.rows[0]?.rows ?? 0), objects: null, bytes: null };
  }

  async ruleMeasures(ruleText: string, partition: Partition, field: string): Promise<Measures> {
    return (await this.pool.read((c) => userFirstRow(c, ruleText, params(partition), { field, where: this.where }))) as Measures;
  }

  isTransient(err: unknown): boolean {
    return classifyPgError(err) === 'transient';
  }

  async close(): Promise<void> {
    await this.pool.closeAll();
  }
}

export function params(partition: Partition, runId = 'read'): Record<string, string> {
  return { partition_start: partition.start, partition_end: partition.end, run_id: runId };
}

/**
 * The rows of a one-column `COPY … TO STDOUT` (text format) as blocks of whole lines, as bytes:
 * records joined by RS within a row become lines of their own. COPY's text format doubles every
 * backslash; JSON text has no raw tab, newline or other control character for it to escape, so
 * undoing the doubling is exact.
 */
export async function* copyBlocks(stream: AsyncIterable<Buffer>): AsyncGenerator<RecordBlock> {
  let pieces: Buffer[] = [];
  for await (const chunk of stream) {
    const end = chunk.lastIndexOf(NEWLINE);
    if (end === -1) {
      pieces.push(chunk);
      continue;
    }
    pieces.push(chunk.subarray(0, end + 1));
    const lines = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
    pieces = end + 1 < chunk.length ? [chunk.subarray(end + 1)] : [];
    yield block(lines);
  }
  if (pieces.length > 0) yield block(Buffer.concat([...pieces, Buffer.from('\n')]));
}

function block(lines: Buffer): RecordBlock {
  // in place: the buffer is this reader's alone
  for (let at = lines.indexOf(RS); at !== -1; at = lines.indexOf(RS, at + 1)) lines[at] = NEWLINE;
  return { data: undoubleBackslashes(lines), count: countLines(lines) };
}

/** A numeric column (not an array of them: those stay JSON arrays of numbers). */
const NUMERIC = /^numeric(\(\d+,-?\d+\))?$/;

/** Bytes of records per COPY row (the server's groups; a larger record is a row of its own). */
const GROUP_BYTES = 256 * 1024;
const RS = 0x1e;
const BACKSLASH = 0x5c;

/** `\\` → `\` throughout: every backslash in COPY's text output comes doubled. */
function undoubleBackslashes(data: Buffer): Buffer {
  let at = data.indexOf(BACKSLASH);
  if (at === -1) return data;
  const out = Buffer.allocUnsafe(data.length);
  let from = 0;
  let length = 0;
  while (at !== -1) {
    // keep up to and including the first of the pair; skip the second
    length += data.copy(out, length, from, at + 1);
    from = at + 2;
    at = data.indexOf(BACKSLASH, from);
  }
  length += data.copy(out, length, from);
  return out.subarray(0, length);
}
