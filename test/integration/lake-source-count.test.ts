/**
 * An S3 source's count, taken once per process: a second measure of a partition whose objects a
 * listing shows unchanged (same keys, sizes and ETags) answers without downloading them or
 * running source.query again — the reconciliation right after a write — and a changed object,
 * or a query whose count may change by itself, is read again. Real s3rver over HTTP, through
 * the fault proxy only to see the requests.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ConnectionSchema, s3SourceSchema } from '../../shared/schemas.ts';
import { createS3Client, s3Endpoint } from '../../electron/engine/targets/s3/client.ts';
import { S3Bucket } from '../../electron/engine/targets/s3/bucket.ts';
import { S3RecordSource } from '../../electron/engine/targets/s3/sources.ts';
import { createTestBucket, putObject, putRecords, testS3Client } from '../support/s3.ts';
import { startS3Proxy, type S3Proxy } from '../support/s3Proxy.ts';

let s3: S3Client;
let proxy: S3Proxy;
let name: string;
let bucket: S3Bucket;

const DAY = { key: '2026-03-01', start: '2026-03-01T00:00:00+00:00', end: '2026-03-02T00:00:00+00:00' };
const STEM = 'raw/dt=2026-03-01/';

function source(query?: string): S3RecordSource {
  const spec = s3SourceSchema.parse({ kind: 's3', connection: 'lake', path: 'raw/dt={date}/', format: 'jsonl', query });
  return new S3RecordSource(bucket, spec, 'day');
}

/** GETs of the partition's data objects (not listings, not the marker) since `from`. */
function downloads(from: number): string[] {
  return proxy.log.slice(from).filter((line) => line.startsWith('GET ') && /\.json(\?|$)/.test(line) && !line.includes('list-type'));
}

beforeAll(async () => {
  s3 = testS3Client(inject('s3'));
  name = await createTestBucket(s3, 'lakecount');
  proxy = await startS3Proxy(inject('s3').endpoint);
  const info = inject('s3');
  const connection = s3ConnectionSchema.parse({
    kind: 's3',
    bucket: name,
    endpoint: proxy.endpoint,
    force_path_style: true,
    access_key_id_env: 'LAKE_KEY',
    secret_access_key_env: 'LAKE_SECRET',
  });
  const env = { LAKE_KEY: info.accessKeyId, LAKE_SECRET: info.secretAccessKey };
  bucket = new S3Bucket(name, createS3Client(s3Endpoint('lake', connection, env), 4), 4);
  await putRecords(
    s3,
    name,
    `${STEM}a.json`,
    Array.from({ length: 10 }, (_, i) => ({ id: i })),
  );
  await putRecords(
    s3,
    name,
    `${STEM}b.json`,
    Array.from({ length: 10 }, (_, i) => ({ id: 10 + i })),
  );
  await putObject(s3, name, `${STEM}_complete`, '');
});

afterAll(async () => {
  bucket?.close();
  await proxy?.close();
  s3?.destroy();
});

describe("an S3 source's count, within one process", () => {
  it('is taken from the first read while the objects are the same versions, and read again once one changes', async () => {
    const even = source('select id from source where id % 2 = 0');
    let from = proxy.log.length;
    expect((await even.measure(DAY)).records).toBe(10);
    expect(downloads(from)).toHaveLength(2);

    from = proxy.log.length;
    expect(await even.measure(DAY)).toEqual({ objects: 2, bytes: expect.any(Number) as number, records: 10 });
    expect(downloads(from), 'the same versions: nothing downloaded').toEqual([]);
    expect(
      proxy.log.slice(from).some((line) => line.includes('list-type=2')),
      'but listed, for their ETags',
    ).toBe(true);

    // the same key and the same size, other bytes: only the ETag tells
    await putRecords(
      s3,
      name,
      `${STEM}b.json`,
      Array.from({ length: 10 }, (_, i) => ({ id: 20 + i })),
    );
    from = proxy.log.length;
    expect((await even.measure(DAY)).records).toBe(10);
    expect(downloads(from), 'b.json changed: read again').toHaveLength(2);

    await putRecords(
      s3,
      name,
      `${STEM}b.json`,
      Array.from({ length: 11 }, (_, i) => ({ id: 30 + 2 * i })),
    );
    from = proxy.log.length;
    expect((await even.measure(DAY)).records).toBe(16);
    expect(downloads(from)).toHaveLength(2);
  });

  it.each([
    ['draws at random', 'select id from source where random() < 2'],
    ['reads the clock', "select id from source where now() > timestamp '2000-01-01'"],
    ['filters on :run_id (the write binds the run, a measure does not)', "select id from source where :run_id <> ''"],
  ])('is read again every time for a query that %s', async (_why, query) => {
    const unstable = source(query);
    await unstable.measure(DAY);
    const from = proxy.log.length;
    expect((await unstable.measure(DAY)).records).toBe(21);
    expect(downloads(from)).toHaveLength(2);
  });

  it('is read again once an object is gone or another one arrives', async () => {
    const all = source('select id from source');
    expect((await all.measure(DAY)).records).toBe(21);
    await putRecords(s3, name, `${STEM}c.json`, [{ id: 100 }]);
    let from = proxy.log.length;
    expect((await all.measure(DAY)).records).toBe(22);
    expect(downloads(from)).toHaveLength(3);
    await s3.send(new DeleteObjectCommand({ Bucket: name, Key: `${STEM}a.json` }));
    from = proxy.log.length;
    expect((await all.measure(DAY)).records).toBe(12);
    expect(downloads(from)).toHaveLength(2);
  });
});
