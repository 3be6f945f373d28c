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
import { measureSourceSql, sourceAsTable } from '../postgres/statements.ts';
import type { LakeSession, PartitionValues } from './lakeSession.ts';
import { duckTypeOfPg, readerSql, DEFAULT_CSV } from './lakeSql.ts';
import { countLines, NEWLINE, type RecordBlock } from './records.ts';
import type { LakeRelation, RecordSource, RecordStream, SourceCounts } from './sources.ts';

export class PostgresRecordSource implements RecordSource {
  private copySource: CopySource | undefined;
  /** The query's columns as DuckDB types: JSON Lines written from its rows read back exactly. */
  private columns: { name: string; type: string }[] = [];

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
    const json = `SELECT row_to_json(q)::text COLLATE "C" AS j FROM ${sourceAsTable(this.sourceQuery).replace(/AS src$/, 'AS q')}`;
    // In order, joined by RS into COPY rows of about GROUP_BYTES each (see copyBlocks).
    const ordered = `SELECT string_agg(j, chr(30) ORDER BY j) AS j FROM (SELECT j, (sum(octet_length(j)) OVER (ORDER BY j ROWS UNBOUNDED PRECEDING) - octet_length(j)) / ${GROUP_BYTES} AS g FROM (${json}) AS s) AS n GROUP BY g ORDER BY g`;
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
        'SELECT format_type(f.oid, f.mod) AS t FROM unnest(CAST(:oids AS oid[]), CAST(:mods AS int[])) WITH ORDINALITY AS f(oid, mod, n) ORDER BY f.n',
        {
          oids: `{${probe.fields.map((f) => f.dataTypeID).join(',')}}`,
          mods: `{${probe.fields.map((f) => f.dataTypeModifier).join(',')}}`,
        },
      );
      return probe.fields.map((f, i) => ({ name: f.name, type: duckTypeOfPg(types.rows[i]?.t ?? 'text') }));
    });
    this.copySource = await this.pool.read((c) => prepareCopySource(c, ordered, 'src.j'));
  }

  /** The partition's rows spooled as JSON Lines into the session's folder, read back with their types. */
  async lakeRelation(partition: Partition, session: LakeSession, _values: PartitionValues, signal: AbortSignal): Promise<LakeRelation> {
    const stream = await this.open(partition, signal);
    const dir = join(session.dir, 'source');
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
    await session.view('source', readerSql([file], enc, this.columns));
    return { select: { table: '(SELECT * FROM source)', values: [] }, counts: { objects: null, bytes: null } };
  }

  open(partition: Partition, signal: AbortSignal): Promise<RecordStream> {
    if (!this.copySource) throw new Error('prepare() must run before reading partitions');
    const copySource: CopySource = this.copySource;
    let records = 0;
    const pool = this.pool;
    // The connection is taken when reading starts, so a partition that fails before (busy,
    // cleanup) holds none. A consumer that stops early (abort, failure) returns the generator:
    // its finally drops the half-read COPY's connection.
    async function* rows(): AsyncGenerator<RecordBlock> {
      if (signal.aborted) return;
      const client = await pool.acquire();
      let broken = true;
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        await setCopyParameters(client, copySource, params(partition));
        for await (const block of copyBlocks(copyTo(client, copySource.copySql))) {
          records += block.count;
          yield block;
        }
        await client.query('COMMIT');
        broken = false;
      } finally {
        // a COPY abandoned half-read leaves the connection in an unknown state
        pool.release(client, broken);
      }
    }
    return Promise.resolve({ records: rows(), counts: () => ({ records, objects: null, bytes: null }) });
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
