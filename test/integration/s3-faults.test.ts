/**
 * S3 failures injected between the AWS SDK and s3rver by a loopback proxy — 503 SlowDown,
 * 500, a connection reset halfway through an upload or a download, SIGKILL while a multipart
 * upload is open, before the manifest and after it. Each ends, after resume where there was a
 * crash, with every partition published once, no object the manifests do not list, no open
 * multipart upload, and the ledger agreeing with the manifests.
 */
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import { GetObjectTaggingCommand, type S3Client } from '@aws-sdk/client-s3';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, runCli, startCli, type Workspace } from '../support/workspace.ts';
import { createTestBucket, getText, listKeys, mixedConfig, openUploads, s3Env, testS3Client } from '../support/s3.ts';
import { startS3Proxy, type S3Proxy } from '../support/s3Proxy.ts';
import { exportJob, PROJECT, refineJob, seedEvents } from '../support/events.ts';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;

let db: TestDb;
let ws: Workspace;
let s3: S3Client;
let bucket: string;
let proxy: S3Proxy;

const ROOT = `${PROJECT}-backfill/`;
const RAW = `${ROOT}${PROJECT}-backfill_{date}_{hour}`;
const BIG = 'big/big_{date}_{hour}';

interface Manifest {
  run_id: string;
  attempt: number;
  records: number;
  checksum: string;
  objects: { key: string; size: number }[];
}

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 's3faults');
  await seedEvents(db.client, 'events', { from: '2026-01-20', hours: 4, perHour: 200, seed: 3 });
  // ~100k wide rows in one hour: about 20 MB of JSON, so each object is a 3-part multipart upload
  await db.client.query(
    `create table big as select g as event_id, timestamptz '2026-02-01T00:00Z' + g * interval '30 ms' as event_time, repeat(md5(g::text), 3) as payload from generate_series(1, 100000) g`,
  );
  s3 = testS3Client(inject('s3'));
  bucket = await createTestBucket(s3, 'faults');
  proxy = await startS3Proxy(inject('s3').endpoint);
  // 20 MB objects go up in one PUT by default (32 MiB cutoff): these faults are about multipart uploads
  ws = makeWorkspace('s3faults', {
    WAREHOUSE_PASSWORD: db.password,
    BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF: String(8 * 1024 * 1024),
    ...s3Env(inject('s3')),
  });
  ws.writeConfig(
    mixedConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }, { lake: { bucket, endpoint: proxy.endpoint } }),
  );
  ws.writeJob('raw', exportJob('raw', { path: RAW, recordsPerObject: 80 }));
  ws.writeJob('refined', refineJob('refined', { from: RAW, to: 'refined/event/dt={date}/hour={hour}/' }));
  ws.writeJob(
    'big',
    exportJob('big', { path: BIG, gzip: false, table: 'big' })
      .replace('select event_id, user_id, event_type, event_time, amount, note, props', 'select event_id, event_time, payload')
      .replace(
        '\nvalidation:\n  - name: events exported\n    source: select count(*) as records from big where event_time >= :partition_start and event_time < :partition_end\n    target: records\n',
        '\n',
      ),
  );
});

afterEach(() => {
  const fired = proxy.fired();
  proxy.reset();
  expect(
    fired.every((n) => n > 0),
    `every armed fault fired: ${JSON.stringify(fired)}`,
  ).toBe(true);
});

afterAll(async () => {
  await proxy?.close();
  await db?.drop();
  s3?.destroy();
});

function stemOf(template: string, key: string): string {
  const [date, hour] = [key.slice(0, 10), key.slice(11, 13)];
  return template.replace('{date}', date).replace('{hour}', hour);
}

async function manifestOf(template: string, key: string): Promise<Manifest> {
  return JSON.parse(await getText(s3, bucket, `${stemOf(template, key)}_complete`)) as Manifest;
}

/**
 * Every partition of the run published once: the ledger says published with the manifest's
 * checksum and record count, the partition holds exactly what its manifest lists, nothing is
 * left in the S3 ledger, and no multipart upload is open on the server.
 */
async function expectSettled(runId: string, template: string, keys: string[]): Promise<void> {
  const sqlite = new Database(ws.db, { readonly: true });
  try {
    const rows = sqlite
      .prepare('select partition_key as key, status, rows_written as rows, checksum from partitions where run_id = ? order by seq')
      .all(runId) as { key: string; status: string; rows: number; checksum: string }[];
    expect(rows.map((r) => r.key)).toEqual(keys);
    for (const row of rows) {
      const m = await manifestOf(template, row.key);
      expect(row).toEqual({ key: row.key, status: 'published', rows: m.records, checksum: m.checksum });
      expect(m.run_id).toBe(runId);
      const listed = (await listKeys(s3, bucket, stemOf(template, row.key))).filter((k) => !k.endsWith('_complete'));
      expect(listed).toEqual(m.objects.map((o) => o.key).sort());
    }
    expect(sqlite.prepare('select count(*) as n from s3_effects').get()).toEqual({ n: 0 });
    expect(sqlite.prepare('select count(*) as n from s3_partition_locks').get()).toEqual({ n: 0 });
  } finally {
    sqlite.close();
  }
  expect(openUploads(inject('s3'), bucket)).toEqual([]);
}

function s3Ledger(): { kind: string; upload_id: string | null; object_key: string }[] {
  const sqlite = new Database(ws.db, { readonly: true });
  try {
    return sqlite.prepare('select kind, upload_id, object_key from s3_effects order by id').all() as never;
  } finally {
    sqlite.close();
  }
}

const HOURS = ['2026-01-20T00', '2026-01-20T01', '2026-01-20T02'];

describe('transient S3 errors are retried with backoff', () => {
  it('503 SlowDown on listings and uploads, 500 on the manifest: the run succeeds as if nothing happened', async () => {
    proxy.arm({ method: 'GET', url: /list-type=2/, action: 'slowdown', times: 2 });
    proxy.arm({ method: 'PUT', url: /%230\.[0-9a-f]{16}\.json\.gz/, action: 'slowdown', times: 2 });
    proxy.arm({ method: 'PUT', url: /_complete/, action: 'internal-error' });
    const r = await runCli(ws, ['raw', '--from', '2026-01-20T00', '--to', '2026-01-20T03', '--run-id', 'f-503']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('Reconciliation: 3 partition(s) agree');
    await expectSettled('f-503', RAW, HOURS);
  });

  it('a connection reset halfway through an upload part is retried', async () => {
    proxy.arm({ method: 'PUT', url: /partNumber=2/, action: 'reset-mid-body' });
    const r = await runCli(ws, ['big', '--from', '2026-02-01T00', '--to', '2026-02-01T01', '--run-id', 'f-reset-up']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    await expectSettled('f-reset-up', BIG, ['2026-02-01T00']);
    expect((await manifestOf(BIG, '2026-02-01T00')).records).toBe(100_000);
  });

  it('a connection reset halfway through reading a source object retries the partition', async () => {
    proxy.arm({ method: 'GET', url: new RegExp(`${PROJECT}-backfill_2026-01-20_01%230\\.`), action: 'reset-mid-response' });
    const r = await runCli(ws, ['refined', '--from', '2026-01-20T00', '--to', '2026-01-20T03', '--run-id', 'f-reset-down']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/2026-01-20T01: attempt 1 failed \(.+\); retrying in \d+ ms/);
    await expectSettled('f-reset-down', 'refined/event/dt={date}/hour={hour}/', HOURS);
    expect((await manifestOf('refined/event/dt={date}/hour={hour}/', '2026-01-20T01')).records).toBe(200);
  });
});

describe('SIGKILL, then resume', () => {
  async function killWhen(args: string[], arm: (onHold: () => void) => void): Promise<void> {
    const { child, done } = startCli(ws, args);
    arm(() => child.kill('SIGKILL'));
    const first = await done;
    expect(first.signal).toBe('SIGKILL');
  }

  it('while a multipart upload is open: the resume aborts it by the id in the ledger', async () => {
    // new content, so new object names: the upload cannot be skipped as already there
    await db.client.query(`update big set payload = payload || 'x' where event_id % 1000 = 0`);
    await killWhen(['big', '--from', '2026-02-01T00', '--to', '2026-02-01T01', '--run-id', 'f-kill-mpu'], (onHold) =>
      proxy.arm({ method: 'PUT', url: /partNumber=2/, action: 'hold-before', onHold }),
    );
    expect(openUploads(inject('s3'), bucket)).toHaveLength(1);
    expect(
      s3Ledger()
        .filter((e) => e.kind === 'upload')
        .map((e) => e.upload_id),
    ).toEqual(openUploads(inject('s3'), bucket));
    const r = await runCli(ws, ['--resume', '--run-id', 'f-kill-mpu']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('2026-02-01T00: pending (rolled back at the interruption: no marker on the target)');
    await expectSettled('f-kill-mpu', BIG, ['2026-02-01T00']);
  });

  it('before the manifest lands: nothing was published, the resume writes it once', async () => {
    await db.client.query(
      `update events set note = 'changed' where event_time >= '2026-01-20T02:00Z' and event_time < '2026-01-20T03:00Z'`,
    );
    const before = await manifestOf(RAW, '2026-01-20T02');
    await killWhen(['raw', '--from', '2026-01-20T00', '--to', '2026-01-20T03', '--run-id', 'f-kill-before'], (onHold) =>
      proxy.arm({ method: 'PUT', url: /_2026-01-20_02_complete/, action: 'hold-before', onHold }),
    );
    // the old publish is intact: its manifest and every object it lists
    expect(await manifestOf(RAW, '2026-01-20T02')).toEqual(before);
    for (const o of before.objects) expect(await listKeys(s3, bucket, o.key)).toEqual([o.key]);
    expect(s3Ledger().length).toBeGreaterThan(0);
    const r = await runCli(ws, ['--resume', '--run-id', 'f-kill-before']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    await expectSettled('f-kill-before', RAW, HOURS);
    expect((await manifestOf(RAW, '2026-01-20T02')).checksum).not.toBe(before.checksum);
  });

  it('after the manifest lands: the resume finds it, publishes nothing twice and removes the earlier objects', async () => {
    await db.client.query(
      `update events set note = 'changed again' where event_time >= '2026-01-20T01:00Z' and event_time < '2026-01-20T02:00Z'`,
    );
    const before = await manifestOf(RAW, '2026-01-20T01');
    await killWhen(['raw', '--from', '2026-01-20T00', '--to', '2026-01-20T03', '--run-id', 'f-kill-after'], (onHold) =>
      proxy.arm({ method: 'PUT', url: /_2026-01-20_01_complete/, action: 'hold-after', onHold }),
    );
    const landed = await manifestOf(RAW, '2026-01-20T01');
    expect(landed.run_id).toBe('f-kill-after');
    // both publishes' objects are there until the resume cleans up
    const stem = stemOf(RAW, '2026-01-20T01');
    expect((await listKeys(s3, bucket, stem)).filter((k) => !k.endsWith('_complete')).length).toBe(
      before.objects.length + landed.objects.length,
    );
    const r = await runCli(ws, ['--resume', '--run-id', 'f-kill-after']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('2026-01-20T01: published (committed before the interruption: marker found on the target)');
    expect(await manifestOf(RAW, '2026-01-20T01')).toEqual(landed);
    await expectSettled('f-kill-after', RAW, HOURS);
  });
});

describe('how an object goes up', () => {
  it('up to the upload cutoff (32 MiB by default) in one PUT; above it (8 MiB here) in parts', async () => {
    const stem = stemOf(BIG, '2026-02-01T00').replaceAll('#', '%23');
    const uploadsOf = (from: number) =>
      proxy.log.slice(from).filter((line) => line.startsWith('PUT ') && line.includes(stem) && !line.includes('_complete'));
    // new content each time, so new object names: nothing is skipped as already there
    await db.client.query(`update big set payload = payload || 'y' where event_id % 1000 = 1`);
    const cutoff = ws.env.BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF;
    delete ws.env.BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF;
    let from = proxy.log.length;
    try {
      const r = await runCli(ws, ['big', '--from', '2026-02-01T00', '--to', '2026-02-01T01', '--run-id', 'f-one-put']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    } finally {
      ws.env.BACKFILL_RUNBOOK_S3_UPLOAD_CUTOFF = cutoff;
    }
    const single = uploadsOf(from);
    expect(single, single.join('\n')).toHaveLength(1);
    expect(single[0]).not.toMatch(/uploadId=|partNumber=/);
    await expectSettled('f-one-put', BIG, ['2026-02-01T00']);
    const object = (await manifestOf(BIG, '2026-02-01T00')).objects[0];
    expect(object?.size).toBeGreaterThan(8 * 1024 * 1024);

    await db.client.query(`update big set payload = payload || 'z' where event_id % 1000 = 1`);
    from = proxy.log.length;
    const r = await runCli(ws, ['big', '--from', '2026-02-01T00', '--to', '2026-02-01T01', '--run-id', 'f-parts']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(uploadsOf(from).filter((line) => line.includes('partNumber=')).length).toBe(3);
    await expectSettled('f-parts', BIG, ['2026-02-01T00']);
  });
});

describe('the requests a run makes', () => {
  it('checks the bucket once and learns what the partition holds from one listing, not a HEAD per object; a rerun of the same records only relabels them', async () => {
    const stem = stemOf(RAW, '2026-01-20T03').replaceAll('#', '%23');
    const range = ['raw', '--from', '2026-01-20T03', '--to', '2026-01-20T04'];
    const since = (from: number) => proxy.log.slice(from);
    const bucketChecks = (lines: string[]) => lines.filter((line) => new RegExp(`^HEAD /${bucket}/?(\\?|$)`).test(line));
    // a HEAD of an object before anything was sent to it: asking whether it is there (validation
    // reads each object's stored size after its upload, which is not this)
    const pathOf = (line: string) => line.split(' ')[1]?.split('?')[0];
    const objectHeads = (lines: string[]) =>
      lines.filter(
        (line, i) =>
          line.startsWith('HEAD ') &&
          line.includes(stem) &&
          !lines.slice(0, i).some((l) => l.startsWith('PUT ') && pathOf(l) === pathOf(line)),
      );
    const dataPuts = (lines: string[]) =>
      lines.filter((line) => line.startsWith('PUT ') && line.includes(stem) && !line.includes('_complete'));

    let from = proxy.log.length;
    const first = await runCli(ws, [...range, '--run-id', 'f-req-1']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    await expectSettled('f-req-1', RAW, ['2026-01-20T03']);
    const objects = (await manifestOf(RAW, '2026-01-20T03')).objects;
    expect(objects).toHaveLength(3); // 200 rows, 80 a object
    const log = since(from);
    expect(bucketChecks(log), log.join('\n')).toHaveLength(1);
    expect(objectHeads(log), log.join('\n')).toEqual([]);
    expect(dataPuts(log).filter((line) => !line.includes('tagging'))).toHaveLength(3);

    from = proxy.log.length;
    const again = await runCli(ws, [...range, '--run-id', 'f-req-2']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    await expectSettled('f-req-2', RAW, ['2026-01-20T03']);
    expect((await manifestOf(RAW, '2026-01-20T03')).objects).toEqual(objects);
    const rerun = since(from);
    expect(objectHeads(rerun), rerun.join('\n')).toEqual([]);
    // the same content under the same names: tags rewritten, no byte sent again
    expect(
      dataPuts(rerun).filter((line) => !line.includes('tagging')),
      rerun.join('\n'),
    ).toEqual([]);
    expect(dataPuts(rerun).filter((line) => line.includes('tagging'))).toHaveLength(3);
    for (const o of objects) {
      const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: o.key }));
      expect(tags.TagSet).toContainEqual({ Key: 'run_id', Value: 'f-req-2' });
    }

    // S3 → S3 on one connection: the source and the target are one bucket, checked once
    from = proxy.log.length;
    const refined = await runCli(ws, ['refined', '--from', '2026-01-20T03', '--to', '2026-01-20T04', '--run-id', 'f-req-3']);
    expect(refined.code, refined.stdout + refined.stderr).toBe(0);
    expect(bucketChecks(since(from)), since(from).join('\n')).toHaveLength(1);
  });
});
