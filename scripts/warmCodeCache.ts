/**
 * Build step (scripts/build-node.mjs): writes the V8 code caches of dist/node/vendor/ for one V8
 * profile of run-backfill — `node warm-code-cache.mjs data|quick`, bundled into dist/node and
 * deleted after. It sets the profile's flags as bin/run-backfill.mjs does, then does what a run
 * does with each vendored package, through the product's own code: parses a run's command line,
 * loads the sandbox's config and jobs, makes a run's S3 requests to a canned answerer on
 * loopback, and runs a DuckDB query over a Parquet file. Then it saves what V8 compiled
 * (electron/engine/vendored.ts). Nothing leaves the machine; no credential is real.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as DuckApi from '@duckdb/node-api';
import { setV8Profile } from '../bin/v8Profile.mjs';

const profile = process.argv[2];
if (profile !== 'data' && profile !== 'quick') throw new Error('usage: warm-code-cache.mjs data|quick');
// **Important**: before the product's modules load — they load the vendored packages as they are
// evaluated, and a package loaded without a profile has no cache to write.
setV8Profile(profile);
const [
  { s3ConnectionSchema },
  { buildProgram },
  { commandsFor },
  { loadConfig, loadJob },
  { SANDBOX_JOBS, sandboxConfig },
  { S3Bucket },
  { createS3Client },
  { vendored, vendorOrigins, writeCodeCaches },
] = await Promise.all([
  import('../shared/schemas.ts'),
  import('../electron/cli/buildProgram.ts'),
  import('../electron/cli/commands/index.ts'),
  import('../electron/engine/plan/load.ts'),
  import('../electron/engine/sandbox/jobs.ts'),
  import('../electron/engine/targets/s3/bucket.ts'),
  import('../electron/engine/targets/s3/client.ts'),
  import('../electron/engine/vendored.ts'),
]);

/** Each step may fail (a job that names what this machine lacks): what it compiled still counts. */
async function step(name: string, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (err) {
    process.stderr.write(`warm-code-cache (${profile}): ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'bfr-warm-'));
try {
  await step('command line', async () => {
    const argv = ['sandbox-job', '--from', '2026-01-01', '--to', '2026-01-03', '--run-id', 'warm', '--dry-run', '--json'];
    const program = await buildProgram({ withStore: () => Promise.resolve(), act: () => Promise.resolve() }, commandsFor(argv));
    program.configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
    await program.parseAsync(argv, { from: 'user' });
  });

  await step('config and jobs', () => {
    mkdirSync(join(dir, 'jobs'));
    writeFileSync(join(dir, 'backfill.config.yaml'), sandboxConfig(5432, 'http://127.0.0.1:9000'));
    for (const [name, text] of Object.entries(SANDBOX_JOBS)) writeFileSync(join(dir, 'jobs', `${name}.yaml`), text);
    const config = loadConfig(join(dir, 'backfill.config.yaml'));
    for (const name of Object.keys(SANDBOX_JOBS)) loadJob(join(dir, 'jobs'), name, config);
    return Promise.resolve();
  });

  await step('S3 requests', () => s3Requests());

  await step('DuckDB', async () => {
    const duck = vendored<typeof DuckApi>('@duckdb/node-api');
    const instance = await duck.DuckDBInstance.create(':memory:', { threads: '1' });
    const connection = await instance.connect();
    const file = join(dir, 'warm.parquet').replace(/'/g, "''");
    await connection.run(`COPY (select range as id, 'x' || range as note from range(100)) TO '${file}' (FORMAT parquet)`);
    const reader = await connection.runAndReadAll(`select count(*) as n, max(note) as m from read_parquet('${file}')`);
    reader.getRowObjects();
    connection.closeSync();
    instance.closeSync();
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const origins = vendorOrigins();
const missing = Object.entries(origins).filter(([, origin]) => origin === 'node_modules');
if (missing.length > 0) throw new Error(`warm-code-cache: not from dist/node/vendor: ${missing.map(([name]) => name).join(', ')}`);
for (const file of writeCodeCaches()) process.stdout.write(`${file}\n`);

/** The requests of a lake run, answered by a canned S3 on loopback. */
async function s3Requests(): Promise<void> {
  const xml = (body: string): string => `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
  const ns = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"';
  const etag = '"0cc175b9c0f1b6a831c399e269772661"';
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const send = (body: string): void => void res.writeHead(200, { 'Content-Type': 'application/xml' }).end(xml(body));
      if (url.searchParams.has('list-type')) {
        send(
          `<ListBucketResult ${ns}><Name>warm</Name><Prefix>p/</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated><Contents><Key>p/a.json</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>${etag}</ETag><Size>1</Size><StorageClass>STANDARD</StorageClass></Contents></ListBucketResult>`,
        );
      } else if (url.searchParams.has('tagging') && req.method === 'GET') {
        send(`<Tagging ${ns}><TagSet><Tag><Key>source</Key><Value>backfill</Value></Tag></TagSet></Tagging>`);
      } else if (url.searchParams.has('delete')) {
        send(`<DeleteResult ${ns}><Deleted><Key>p/a.json</Key></Deleted></DeleteResult>`);
      } else if (req.method === 'GET' || req.method === 'HEAD') {
        res
          .writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '1', ETag: etag })
          .end(req.method === 'GET' ? 'a' : undefined);
      } else {
        res.writeHead(200, { ETag: etag }).end();
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const connection = s3ConnectionSchema.parse({ kind: 's3', bucket: 'warm', endpoint, force_path_style: true });
  const client = createS3Client({ name: 'warm', connection, credentials: { accessKeyId: 'warm', secretAccessKey: 'warm' } }, 2);
  const bucket = new S3Bucket('warm', client, 2);
  try {
    await bucket.check();
    await bucket.listAll('p/');
    await bucket.head('p/a.json');
    await bucket.getText('p/a.json');
    const file = join(dir, 'upload.json');
    writeFileSync(file, '{}');
    await bucket.uploadFile('p/b.json', file, 2, 'application/json', () => undefined, undefined, {
      tags: { source: 'backfill' },
      metadata: { run_id: 'warm' },
    });
    await bucket.putTags('p/b.json', { source: 'backfill' });
    await bucket.getTags('p/b.json');
    await bucket.deleteKeys(['p/a.json']);
  } finally {
    bucket.close();
    await new Promise<void>((done) => server.close(() => done()));
  }
}
