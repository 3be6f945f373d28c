/**
 * Postgres → S3 through the built `run-backfill`, against s3rver via the real AWS SDK: raw
 * events recovered into the backfill prefix, one `_complete` manifest per partition, reruns
 * that leave identical manifests, and the daily-ETL guard (seed 000).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, runCli, type Workspace } from '../support/workspace.ts';
import {
  createTestBucket,
  getRecords,
  getText,
  listKeys,
  mixedConfig,
  openUploads,
  putObject,
  s3Env,
  testS3Client,
} from '../support/s3.ts';
import { exportJob, PROJECT, seedEvents } from '../support/events.ts';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;

let db: TestDb;
let ws: Workspace;
let s3: S3Client;
let bucket: string;

const AUTO = `${PROJECT}/`;
const BACKFILL = `${PROJECT}-backfill/`;
const PATH = `${BACKFILL}${PROJECT}-backfill_{date}_{hour}`;
const range = ['--from', '2026-01-20T17', '--to', '2026-01-20T20'];

interface Manifest {
  partition: string;
  run_id: string;
  records: number;
  bytes: number;
  checksum: string;
  objects: { key: string; size: number; sha256: string; records: number }[];
}

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 's3export');
  await seedEvents(db.client, 'events', { from: '2026-01-20', hours: 24, perHour: 150, seed: 7 });
  s3 = testS3Client(inject('s3'));
  bucket = await createTestBucket(s3, 'amplitude-raw');
  // What the automated export already wrote: the daily ETL reads exactly this prefix.
  await putObject(s3, bucket, `${AUTO}${PROJECT}_2026-01-27_10#0.json.gz`, 'automated');
  await putObject(s3, bucket, `${AUTO}${PROJECT}_2026-01-27_10_complete`, '');
  ws = makeWorkspace('s3export', { WAREHOUSE_PASSWORD: db.password, ...s3Env(inject('s3')) });
  ws.writeConfig(
    mixedConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }, { lake: { bucket, endpoint: inject('s3').endpoint } }),
  );
  ws.writeJob('raw-recovery', exportJob('raw-recovery', { path: PATH, prefix: AUTO, backfillPrefix: BACKFILL, recordsPerObject: 100 }));
});

afterAll(async () => {
  await db?.drop();
  s3?.destroy();
});

async function manifest(hour: string): Promise<Manifest> {
  return JSON.parse(await getText(s3, bucket, `${BACKFILL}${PROJECT}-backfill_2026-01-20_${hour}_complete`)) as Manifest;
}

describe('Postgres → S3 backfill prefix', () => {
  it('writes each hour as content-named objects plus one _complete manifest', async () => {
    const r = await runCli(ws, ['raw-recovery', ...range, '--run-id', 'exp-1']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Reconciliation: 3 partition(s) agree');
    const keys = await listKeys(s3, bucket, BACKFILL);
    for (const hour of ['17', '18', '19']) {
      const m = await manifest(hour);
      expect(m.partition).toBe(`2026-01-20T${hour}`);
      expect(m.run_id).toBe('exp-1');
      expect(m.records).toBe(150);
      expect(m.objects.map((o) => o.records)).toEqual([100, 50]);
      expect(m.objects.map((o) => o.key)).toEqual([
        expect.stringMatching(new RegExp(`^${BACKFILL}${PROJECT}-backfill_2026-01-20_${hour}#0\\.[0-9a-f]{16}\\.json\\.gz$`)),
        expect.stringMatching(new RegExp(`^${BACKFILL}${PROJECT}-backfill_2026-01-20_${hour}#1\\.[0-9a-f]{16}\\.json\\.gz$`)),
      ]);
      // the partition holds exactly what its manifest lists
      expect(keys.filter((k) => k.includes(`_2026-01-20_${hour}`))).toEqual(
        [...m.objects.map((o) => o.key), `${BACKFILL}${PROJECT}-backfill_2026-01-20_${hour}_complete`].sort(),
      );
    }
    const records = [
      ...(await getRecords(s3, bucket, (await manifest('18')).objects[0]?.key ?? '')),
      ...(await getRecords(s3, bucket, (await manifest('18')).objects[1]?.key ?? '')),
    ];
    const rows = await db.client.query<{ n: string }>(
      `select count(*)::text as n from events where event_time >= '2026-01-20T18:00Z' and event_time < '2026-01-20T19:00Z'`,
    );
    expect(records).toHaveLength(Number(rows.rows[0]?.n));
    // rows come back exactly as Postgres renders them as JSON (tabs, quotes, backslashes and all)
    const tricky = await db.client.query<{ j: unknown }>(
      `select row_to_json(e) as j from (select event_id, user_id, event_type, event_time, amount, note, props from events where event_id = 2761) e`,
    );
    const all = [];
    for (const hour of ['17', '18', '19'])
      for (const o of (await manifest(hour)).objects) all.push(...(await getRecords(s3, bucket, o.key)));
    expect(all).toContainEqual(tricky.rows[0]?.j);
    expect(openUploads(inject('s3'), bucket)).toEqual([]);
  });

  it('a rerun of the same range leaves identical manifests: same keys, same checksums', async () => {
    const before = await Promise.all(['17', '18', '19'].map(manifest));
    const r = await runCli(ws, ['raw-recovery', ...range, '--run-id', 'exp-2']);
    expect(r.code, r.stderr).toBe(0);
    const after = await Promise.all(['17', '18', '19'].map(manifest));
    expect(after.map((m) => m.run_id)).toEqual(['exp-2', 'exp-2', 'exp-2']);
    expect(after.map((m) => [m.objects, m.checksum, m.records, m.bytes])).toEqual(
      before.map((m) => [m.objects, m.checksum, m.records, m.bytes]),
    );
  });

  it('replaces a changed partition and removes the earlier publish only after the new manifest', async () => {
    const old = await manifest('19');
    await db.client.query(
      `delete from events where event_time >= '2026-01-20T19:00Z' and event_time < '2026-01-20T20:00Z' and event_id % 2 = 0`,
    );
    const r = await runCli(ws, ['raw-recovery', '--from', '2026-01-20T19', '--to', '2026-01-20T20', '--run-id', 'exp-3']);
    expect(r.code, r.stderr).toBe(0);
    const now = await manifest('19');
    expect(now.records).toBe(75);
    expect(now.checksum).not.toBe(old.checksum);
    const keys = await listKeys(s3, bucket, `${BACKFILL}${PROJECT}-backfill_2026-01-20_19`);
    expect(keys).toEqual([...now.objects.map((o) => o.key), `${BACKFILL}${PROJECT}-backfill_2026-01-20_19_complete`].sort());
  });

  it('an automated-prefix reader never sees a backfill object', async () => {
    expect(await listKeys(s3, bucket, AUTO)).toEqual([
      `${AUTO}${PROJECT}_2026-01-27_10#0.json.gz`,
      `${AUTO}${PROJECT}_2026-01-27_10_complete`,
    ]);
    // …not even a reader that lists without the trailing slash sees anything but its own and the backfill's own prefix
    const loose = await listKeys(s3, bucket, PROJECT);
    expect(loose.filter((k) => k.startsWith(AUTO))).toEqual([
      `${AUTO}${PROJECT}_2026-01-27_10#0.json.gz`,
      `${AUTO}${PROJECT}_2026-01-27_10_complete`,
    ]);
    expect(loose.filter((k) => !k.startsWith(AUTO)).every((k) => k.startsWith(BACKFILL))).toBe(true);
  });
});

describe('the daily-ETL guard', () => {
  it('refuses (exit 4) a plan that writes raw backfill data into the automated prefix, naming the prefix to use', async () => {
    ws.writeJob(
      'raw-into-auto',
      exportJob('raw-into-auto', { path: `${AUTO}${PROJECT}_{date}_{hour}`, prefix: AUTO, backfillPrefix: BACKFILL }),
    );
    const before = await listKeys(s3, bucket);
    const r = await runCli(ws, ['raw-into-auto', '--from', '2026-01-20T19', '--to', '2026-01-20T20', '--run-id', 'into-auto']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`the target would write raw backfill data into the automated prefix s3://${bucket}/${AUTO} (target.prefix)`);
    expect(r.stderr).toContain(`set target.path to "${BACKFILL}${PROJECT}-backfill_{date}_{hour}"`);
    expect(r.stderr).toContain(`e.g. s3://${bucket}/${BACKFILL}${PROJECT}-backfill_2026-01-20_19#0.json.gz with its …_19_complete marker`);
    expect(await listKeys(s3, bucket)).toEqual(before);
  });

  it('refuses it too when the job names no backfill prefix, suggesting a sibling', async () => {
    ws.writeJob('raw-no-backfill', exportJob('raw-no-backfill', { path: `${AUTO}${PROJECT}_{date}_{hour}`, prefix: AUTO }));
    const r = await runCli(ws, ['raw-no-backfill', '--from', '2026-01-20T19', '--to', '2026-01-20T20', '--run-id', 'into-auto-2']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`Write them under the backfill prefix s3://${bucket}/${BACKFILL} instead`);
  });

  it('a backfill prefix that overlaps the automated one is a job file error (exit 2)', async () => {
    ws.writeJob(
      'raw-overlap',
      exportJob('raw-overlap', { path: `${AUTO}backfill/x_{date}_{hour}`, prefix: AUTO, backfillPrefix: `${AUTO}backfill/` }),
    );
    const r = await runCli(ws, ['raw-overlap', '--from', '2026-01-20T19', '--to', '2026-01-20T20', '--run-id', 'overlap']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `field "target.backfill_prefix": "${AUTO}backfill/" overlaps the automated prefix "${AUTO}": a reader listing one would see the other's objects; use a sibling such as "${PROJECT}-backfill/"`,
    );
  });
});
