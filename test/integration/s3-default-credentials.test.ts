/**
 * A connection that names no key variables takes the AWS default credential chain — on an EC2
 * machine, the instance metadata service. The built command runs the S3 client from a bundle of
 * its own (electron/engine/vendored.ts), the chain's providers included, so that path is run here
 * through the bundle: the metadata service is a stand-in on loopback
 * (AWS_EC2_METADATA_SERVICE_ENDPOINT) handing out the S3 server's keys, and a real S3 → S3 run
 * must sign with them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { createTestBucket, putObject, putRecords, testS3Client } from '../support/s3.ts';
import { makeWorkspace, runCli, type Workspace } from '../support/workspace.ts';

let s3: S3Client;
let bucket: string;
let imds: Server;
let ws: Workspace;
const asked: string[] = [];

beforeAll(async () => {
  const info = inject('s3');
  s3 = testS3Client(info);
  bucket = await createTestBucket(s3, 'imds');
  await putRecords(
    s3,
    bucket,
    'raw/dt=2026-03-01/a.json',
    Array.from({ length: 25 }, (_, i) => ({ id: i })),
  );
  await putObject(s3, bucket, 'raw/dt=2026-03-01/_complete', '');
  // IMDSv2 as EC2 answers it: a session token, the role's name, then its credentials
  imds = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    const url = req.url ?? '';
    if (req.method === 'PUT' && url === '/latest/api/token') return void res.end('imds-token');
    if (req.headers['x-aws-ec2-metadata-token'] !== 'imds-token') return void res.writeHead(401).end();
    if (/\/security-credentials(-extended)?\/$/.test(url)) return void res.end('backfill-role');
    if (/\/security-credentials(-extended)?\/backfill-role$/.test(url)) {
      return void res.setHeader('Content-Type', 'application/json').end(
        JSON.stringify({
          Code: 'Success',
          Type: 'AWS-HMAC',
          AccessKeyId: info.accessKeyId,
          SecretAccessKey: info.secretAccessKey,
          Token: 'session-token',
          Expiration: new Date(Date.now() + 3600_000).toISOString(),
        }),
      );
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => imds.listen(0, '127.0.0.1', done));
  ws = makeWorkspace('imds', { AWS_EC2_METADATA_SERVICE_ENDPOINT: `http://127.0.0.1:${(imds.address() as AddressInfo).port}` });
  ws.writeConfig(`connections:
  lake: { kind: s3, bucket: ${bucket}, endpoint: "${info.endpoint}", force_path_style: true, region: ${info.region} }
`);
  ws.writeJob(
    'copy-imds',
    `name: copy-imds
unit: day
source: { kind: s3, connection: lake, path: "raw/dt={date}/", format: jsonl }
target: { kind: s3, connection: lake, path: "copied/dt={date}/", format: jsonl }
write_mode: overwrite-partition
`,
  );
});

afterAll(async () => {
  await new Promise<void>((done) => (imds ? imds.close(() => done()) : done()));
  s3?.destroy();
});

describe('the AWS default credential chain in the built command', () => {
  it('signs with the instance metadata service credentials', async () => {
    const r = await runCli(ws, ['copy-imds', '--from', '2026-03-01', '--to', '2026-03-02', '--run-id', 'run-imds']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/published 25 rows/);
    expect(asked).toContain('PUT /latest/api/token');
    expect(
      asked.some((a) => /security-credentials(-extended)?\/backfill-role$/.test(a)),
      asked.join('\n'),
    ).toBe(true);
  });
});
