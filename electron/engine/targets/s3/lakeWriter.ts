/**
 * Writes a partition's objects with DuckDB: CSV, Parquet (its codecs), JSON Lines in zstd, or
 * the output of a query. DuckDB streams the SELECT into a local file in the partition's folder
 * (memory bounded by LAKE_MEMORY_LIMIT; beyond it DuckDB spills to disk), then each file is
 * hashed and uploaded under its content name like any other data object.
 *
 * A partition of more than records_per_object rows is materialised once in a DuckDB table
 * (spilling to disk too) and cut into objects of that many rows, in order.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ManifestObject } from './manifest.ts';
import type { LakeSession } from './lakeSession.ts';
import { contentTypeOf, copyOptions, extensionOf, literal, type Encoding } from './lakeSql.ts';
import { hashFile, uploadObject, type UploadOptions } from './partWriter.ts';
import { AbortedError } from '../../executor/errors.ts';

export interface LakeWrite {
  session: LakeSession;
  select: { table: string; values: string[] };
  encoding: Encoding;
  recordsPerObject: number;
  /** where the objects are written before upload (kept until the partition is settled) */
  outDir: string;
  /** the job field whose SQL `select` carries, for messages */
  field: string;
  sql: string;
}

/**
 * The objects, and `rows`: the records the SELECT yielded as DuckDB counted them running it, the
 * source side of "read N, wrote M" (the objects' own counts come from the cut, one COPY each).
 */
export async function writeLakeObjects(
  w: LakeWrite,
  upload: UploadOptions,
): Promise<{ objects: (ManifestObject & { file: string })[]; rows: number }> {
  mkdirSync(w.outDir, { recursive: true });
  const ext = extensionOf(w.encoding);
  const options = copyOptions(w.encoding);
  const fileOf = (i: number): string => join(w.outDir, `part-${i}.${ext}`);
  const first = fileOf(0);
  const rows = await w.session.copyUserSelect(w.select, first, options, w.field, w.sql);
  const files: { file: string; records: number }[] = [];
  if (rows === 0) rmSync(first, { force: true });
  else if (rows <= w.recordsPerObject) files.push({ file: first, records: rows });
  else {
    rmSync(first, { force: true });
    await w.session.run(`CREATE OR REPLACE TEMP TABLE bf_result AS SELECT * FROM ${w.select.table} AS q`, w.select.values);
    for (let i = 0, offset = 0; offset < rows; i++, offset += w.recordsPerObject) {
      if (upload.signal.aborted) throw new AbortedError();
      const n = await w.session.run(
        `COPY (SELECT * FROM bf_result LIMIT ${w.recordsPerObject} OFFSET ${offset}) TO ${literal(fileOf(i))} (${options})`,
      );
      files.push({ file: fileOf(i), records: n });
    }
    await w.session.run('DROP TABLE bf_result');
  }
  const written: (ManifestObject & { file: string })[] = [];
  for (const [i, f] of files.entries()) {
    if (upload.signal.aborted) throw new AbortedError();
    written.push(await uploadObject(await hashFile(f.file, f.records), i, ext, contentTypeOf(w.encoding), upload));
  }
  return { objects: written, rows };
}
