/**
 * DuckDB SQL text for the lake: readers of staged objects, COPY options per format, the
 * partition's parameters, and Postgres types as DuckDB types. Pure: nothing here runs SQL.
 * Only file names this module made and option values from the schema's enums reach the text;
 * user SQL is placed by lakeSession.ts after it has been checked to be one SELECT.
 */
import type { S3Compression, S3Format } from '../../../../shared/schemas.ts';
import { bindNamed } from '../postgres/sql.ts';

export interface CsvOptions {
  header: boolean;
  delimiter: string;
  quote: string;
  escape: string;
}

/** How one set of objects is encoded. */
export interface Encoding {
  format: S3Format;
  /** text formats; undefined on a source: from each file's extension */
  compression?: S3Compression;
  csv: CsvOptions;
  parquet: { codec: 'zstd' | 'snappy' | 'gzip' | 'uncompressed'; rowGroupSize: number };
}

/** A CSV line (a record, quoted newlines included) may be at most this long: over it, an error naming the object. */
export const MAX_CSV_LINE_BYTES = 2 * 1024 * 1024;

export const DEFAULT_CSV: CsvOptions = { header: true, delimiter: ',', quote: '"', escape: '"' };

/** 'it''s' — a string literal. */
export function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function fileList(files: readonly string[]): string {
  return `[${files.map(literal).join(', ')}]`;
}

function duckCompression(c: S3Compression): string {
  return c === 'none' ? "'uncompressed'" : literal(c);
}

/** `, compression = 'gzip'`, or nothing: DuckDB then goes by each file's extension. */
function readCompression(c: S3Compression | undefined): string {
  return c === undefined ? '' : `, compression = ${duckCompression(c)}`;
}

/**
 * A table expression over staged files. CSV is read as text (all_varchar): CSV carries no
 * types, and a sniffer guessing them turns a zip code's leading zero into an integer; cast in
 * the query. strict_mode makes a ragged row an error instead of a silently padded one.
 * `columns` (name → DuckDB type) fixes the types of JSON Lines written from Postgres rows.
 */
export function readerSql(files: readonly string[], enc: Encoding, columns?: readonly { name: string; type: string }[]): string {
  switch (enc.format) {
    case 'parquet':
      return `read_parquet(${fileList(files)})`;
    case 'csv': {
      const c = enc.csv;
      return `read_csv(${fileList(files)}, header = ${c.header}, delim = ${literal(c.delimiter)}, quote = ${literal(c.quote)}, escape = ${literal(c.escape)}, all_varchar = true, strict_mode = true, null_padding = false, max_line_size = ${MAX_CSV_LINE_BYTES}, buffer_size = ${4 * MAX_CSV_LINE_BYTES}${readCompression(enc.compression)})`;
    }
    case 'jsonl': {
      const typed =
        columns && columns.length > 0
          ? `, columns = {${columns.map((c) => `${literal(c.name)}: ${literal(c.type)}`).join(', ')}}`
          : ', sample_size = -1';
      return `read_json(${fileList(files)}, format = 'newline_delimited'${readCompression(enc.compression)}${typed})`;
    }
  }
}

/** The options of `COPY … TO file (…)` that write `enc`. */
export function copyOptions(enc: Encoding): string {
  switch (enc.format) {
    case 'parquet':
      return `FORMAT parquet, COMPRESSION ${enc.parquet.codec}, ROW_GROUP_SIZE ${enc.parquet.rowGroupSize}`;
    case 'csv': {
      const c = enc.csv;
      return `FORMAT csv, HEADER ${c.header}, DELIMITER ${literal(c.delimiter)}, QUOTE ${literal(c.quote)}, ESCAPE ${literal(c.escape)}, COMPRESSION ${duckCompression(enc.compression ?? 'none')}`;
    }
    case 'jsonl':
      return `FORMAT json, COMPRESSION ${duckCompression(enc.compression ?? 'none')}`;
  }
}

/** The object name's ending: `json.gz`, `csv.zst`, `parquet`. */
export function extensionOf(enc: Pick<Encoding, 'format' | 'compression'>): string {
  const base = enc.format === 'jsonl' ? 'json' : enc.format;
  if (enc.format === 'parquet') return base;
  return enc.compression === 'gzip' ? `${base}.gz` : enc.compression === 'zstd' ? `${base}.zst` : base;
}

export function contentTypeOf(enc: Pick<Encoding, 'format' | 'compression'>): string {
  if (enc.format === 'parquet') return 'application/vnd.apache.parquet';
  if (enc.compression === 'gzip') return 'application/gzip';
  if (enc.compression === 'zstd') return 'application/zstd';
  return enc.format === 'csv' ? 'text/csv' : 'application/x-ndjson';
}

/**
 * `:partition_start` → `CAST($1 AS TIMESTAMPTZ)` (and `$2`, `$3` for the others), the values
 * bound positionally, never spliced into the text. Partition bounds are instants with their
 * zone's offset, so TIMESTAMPTZ keeps them exact whatever the session's time zone.
 */
export function bindPartition(
  sql: string,
  values: Readonly<Record<'partition_start' | 'partition_end' | 'run_id', string>>,
): { text: string; values: string[] } {
  const bound = bindNamed(sql, values, {
    placeholder: (index, name) => (name === 'run_id' ? `CAST($${index} AS VARCHAR)` : `CAST($${index} AS TIMESTAMPTZ)`),
  });
  return { text: bound.text, values: bound.values.map(String) };
}

/** A user's SELECT as a derived table: on lines of its own, so a trailing `-- comment` cannot swallow the parenthesis. */
export function asSubquery(select: string): string {
  return `(\n${select.trim().replace(/;+\s*$/, '')}\n)`;
}

/**
 * A Postgres column type (format_type's text) as the DuckDB type its row_to_json value reads
 * back into exactly. Numerics without a precision, intervals, bytea and anything unknown stay
 * text: their digits and spelling survive, where a guess would round or misread them.
 */
export function duckTypeOfPg(pgType: string): string {
  const t = pgType.toLowerCase();
  const numeric = /^numeric\((\d+),(\d+)\)$/.exec(t);
  // Postgres 15 allows a scale above the precision (numeric(3,5)); a Parquet or DuckDB DECIMAL does not
  if (numeric)
    return Number(numeric[1]) <= 38 && Number(numeric[2]) <= Number(numeric[1]) ? `DECIMAL(${numeric[1]},${numeric[2]})` : 'VARCHAR';
  if (t.endsWith('[]')) return 'JSON';
  const simple: Record<string, string> = {
    smallint: 'SMALLINT',
    integer: 'INTEGER',
    bigint: 'BIGINT',
    real: 'FLOAT',
    'double precision': 'DOUBLE',
    boolean: 'BOOLEAN',
    date: 'DATE',
    'timestamp without time zone': 'TIMESTAMP',
    'timestamp with time zone': 'TIMESTAMPTZ',
    'time without time zone': 'TIME',
    uuid: 'UUID',
    json: 'JSON',
    jsonb: 'JSON',
  };
  return simple[t.replace(/\(\d+\)/g, '')] ?? 'VARCHAR';
}
