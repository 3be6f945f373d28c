/**
 * S3 helpers for the integration tests, through the real @aws-sdk/client-s3 against the
 * s3rver started by s3GlobalSetup.ts: buckets per test file, objects in and out, and a look at
 * the server's own folder for multipart uploads nobody finished or aborted.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3ServerInfo } from './s3GlobalSetup.ts';

export type { S3ServerInfo } from './s3GlobalSetup.ts';

export function testS3Client(info: S3ServerInfo, endpoint = info.endpoint): S3Client {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return new S3Client({
    region: info.region,
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: info.accessKeyId, secretAccessKey: info.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** A new, empty bucket with a unique name (lowercase, as S3 wants). */
export async function createTestBucket(client: S3Client, prefix: string): Promise<string> {
  const name = `${prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 30)}-${randomBytes(4).toString('hex')}`;
  await client.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

export async function listKeys(client: S3Client, bucket: string, prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    keys.push(...(page.Contents ?? []).map((o) => o.Key ?? ''));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

export async function putObject(client: S3Client, bucket: string, key: string, body: string | Buffer): Promise<void> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentLength: bytes.length }));
}

/** Records as one JSON Lines object, gzipped when the key ends in .gz. */
export async function putRecords(client: S3Client, bucket: string, key: string, records: readonly unknown[]): Promise<void> {
  const text = records.map((r) => JSON.stringify(r)).join('\n') + (records.length > 0 ? '\n' : '');
  await putObject(client, bucket, key, key.endsWith('.gz') ? gzipSync(text) : text);
}

export async function getBytes(client: S3Client, bucket: string, key: string): Promise<Buffer> {
  const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await (r.Body?.transformToByteArray() ?? Promise.resolve(new Uint8Array())));
}

export async function getText(client: S3Client, bucket: string, key: string): Promise<string> {
  return (await getBytes(client, bucket, key)).toString('utf8');
}

/** The JSON records of an object (gunzipped when its key ends in .gz). */
export async function getRecords(client: S3Client, bucket: string, key: string): Promise<unknown[]> {
  const bytes = await getBytes(client, bucket, key);
  const text = (key.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
}

/** Multipart uploads still open on the server (neither completed nor aborted). */
export function openUploads(info: S3ServerInfo, bucket: string): string[] {
  const dir = join(info.directory, bucket, '._S3rver_uploads');
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** A connections file with Postgres and S3 connections; S3 credentials come from S3_KEY / S3_SECRET. */
export function mixedConfig(
  pg: Record<string, { url: string; passwordEnv: string }>,
  s3: Record<string, { bucket: string; endpoint: string }>,
): string {
  const lines = ['connections:'];
  for (const [name, c] of Object.entries(pg))
    lines.push(`  ${name}:`, '    kind: postgres', `    url: ${c.url}`, `    password_env: ${c.passwordEnv}`, '    lock_timeout_ms: 2000');
  for (const [name, c] of Object.entries(s3)) {
    lines.push(
      `  ${name}:`,
      '    kind: s3',
      `    bucket: ${c.bucket}`,
      '    region: us-east-1',
      `    endpoint: ${c.endpoint}`,
      '    force_path_style: true',
      '    access_key_id_env: S3_KEY',
      '    secret_access_key_env: S3_SECRET',
    );
  }
  return `${lines.join('\n')}\n`;
}

export function s3Env(info: S3ServerInfo): Record<string, string> {
  return { S3_KEY: info.accessKeyId, S3_SECRET: info.secretAccessKey };
}
