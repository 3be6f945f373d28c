/**
 * The lake tests' oracle: objects fetched from s3rver with the plain AWS SDK, written to a local
 * folder and read by a DuckDB of the test's own (not the product's LakeSession), so what the
 * product wrote is judged by an independent reader.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { GetObjectTaggingCommand, type S3Client } from '@aws-sdk/client-s3';
import { getBytes, getText } from './s3.ts';

export interface ManifestLike {
  objects: { key: string; size: number; records: number }[];
  records: number;
  run_id: string;
  plan_hash: string;
}

export async function manifestOf(s3: S3Client, bucket: string, stem: string): Promise<ManifestLike | null> {
  const text = await getText(s3, bucket, `${stem}_complete`).catch(() => null);
  return text ? (JSON.parse(text) as ManifestLike) : null;
}

export async function tagsOf(s3: S3Client, bucket: string, key: string): Promise<Record<string, string>> {
  const r = await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }));
  return Object.fromEntries((r.TagSet ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
}

/** Runs `sql` over `source`, the given objects read from local copies (format by extension). */
export async function duckOver<T = Record<string, unknown>>(
  s3: S3Client,
  bucket: string,
  keys: readonly string[],
  sql: string,
  reader: (files: string) => string = (files) => defaultReader(keys, files),
): Promise<T[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bfr-oracle-'));
  try {
    const files: string[] = [];
    for (const [i, key] of keys.entries()) {
      const name = join(dir, `${i}${/(\.[a-z]+(\.(gz|zst))?)$/.exec(key)?.[1] ?? ''}`);
      writeFileSync(name, await getBytes(s3, bucket, key));
      files.push(name);
    }
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      const list = `[${files.map((f) => `'${f}'`).join(', ')}]`;
      await c.run(`CREATE VIEW source AS SELECT * FROM ${keys.length === 0 ? '(SELECT 1 AS none WHERE false)' : reader(list)}`);
      return (await c.runAndReadAll(sql)).getRowObjectsJson() as T[];
    } finally {
      c.closeSync();
      db.closeSync();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function defaultReader(keys: readonly string[], list: string): string {
  const key = keys[0] ?? '';
  if (key.endsWith('.parquet')) return `read_parquet(${list})`;
  if (/\.csv(\.gz|\.zst)?$/.test(key)) return `read_csv(${list}, header = true, all_varchar = true)`;
  return `read_json(${list}, format = 'newline_delimited')`;
}
