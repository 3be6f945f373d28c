/**
 * The encoding a job's S3 side declares, resolved once (format, compression, CSV and Parquet
 * options), and whether a partition can take the streaming JSON Lines path or needs DuckDB.
 */
import type { S3Source, S3Target } from '../../../../shared/schemas.ts';
import { DEFAULT_CSV, type Encoding } from './lakeSql.ts';

export function sourceEncoding(spec: S3Source): Encoding {
  return {
    format: spec.format,
    compression: spec.compression ?? (spec.gzip === undefined ? undefined : spec.gzip ? 'gzip' : 'none'),
    csv: { ...DEFAULT_CSV, ...spec.csv },
    parquet: { codec: 'zstd', rowGroupSize: 122_880 },
  };
}

export function targetEncoding(spec: S3Target): Encoding {
  return {
    format: spec.format,
    // text formats are gzipped unless the job says otherwise (the export's format since day one)
    compression: spec.format === 'parquet' ? undefined : (spec.compression ?? (spec.gzip === false ? 'none' : 'gzip')),
    csv: { ...DEFAULT_CSV, ...spec.csv },
    parquet: { codec: spec.parquet?.codec ?? 'zstd', rowGroupSize: spec.parquet?.row_group_size ?? 122_880 },
  };
}

/**
 * JSON Lines, plain or gzipped, with no query: records stream through Node line by line
 * (records.ts, partWriter.ts). Anything else — CSV, Parquet, zstd, a query — goes through DuckDB.
 */
export function streamsAsJsonLines(enc: Encoding, keys: readonly string[] = []): boolean {
  return enc.format === 'jsonl' && enc.compression !== 'zstd' && !keys.some((k) => /\.zst$/.test(k));
}
