/**
 * `run-backfill lake tidy`: a dry run lists the backfill partitions past the job's retention,
 * --apply deletes them (manifest first); the automated prefix, objects without the backfill
 * tag and partitions still within retention are never touched. Snapshots keep the tags.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, runCli, type Workspace } from '../support/workspace.ts';
import { createTestBucket, listKeys, mixedConfig, putObject, s3Env, testS3Client } from '../support/s3.ts';
import { seedEvents } from '../support/events.ts';
import { manifestOf, tagsOf } from '../support/lake.ts';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
let ws: Workspace;
let s3: S3Client;
let bucket: string;
const DAY = '2026-01-20';

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'laketidy');
  await seedEvents(db.client, 'events', { from: DAY, hours: 2, perHour: 30, seed: 2 });
  s3 = testS3Client(inject('s3'));
  bucket = await createTestBucket(s3, 'laketidy');
  ws = makeWorkspace('laketidy', { WAREHOUSE_PASSWORD: db.password, ...s3Env(inject('s3')) });
  ws.writeConfig(
    mixedConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }, { lake: { bucket, endpoint: inject('s3').endpoint } }),
  );
  ws.writeJob(
    'ev-recover',
    `name: ev-recover
unit: hour
source:
  connection: warehouse
  query: select event_id, event_time, amount from events where event_time >= :partition_start and event_time < :partition_end
target:
  kind: s3
  connection: lake
  path: "events-backfill/events-backfill_{date}_{hour}"
  prefix: "events/"
  backfill_prefix: "events-backfill/"
  format: parquet
  backfill_retention_days: 7
write_mode: overwrite-partition
`,
  );
  const r = await runCli(ws, ['ev-recover', '--from', '2026-01-20T00', '--to', '2026-01-20T02', '--run-id', 'tidy-run']);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  await putObject(s3, bucket, `events/events_${DAY}_00#0.json.gz`, 'automated');
  await putObject(s3, bucket, 'events-backfill/someone-elses-file.csv', 'not ours');
  await s3.send(
    new PutObjectCommand({ Bucket: bucket, Key: 'events-backfill/orphan.parquet', Body: 'x', Tagging: 'source=backfill&run_id=dead' }),
  );
});

afterAll(async () => {
  await db?.drop();
  s3?.destroy();
});

describe('lake tidy', () => {
  it('keeps everything within retention', async () => {
    const before = await listKeys(s3, bucket);
    const r = await runCli(ws, ['lake', 'tidy', 'ev-recover', '--apply', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}')).toMatchObject({ applied: true, deleted: 0, kept: 2 });
    expect(await listKeys(s3, bucket)).toEqual(before);
  });

  it('a dry run lists what is due and deletes nothing; --apply deletes exactly that', async () => {
    const later = new Date(Date.now() + 8 * 86_400_000).toISOString();
    const before = await listKeys(s3, bucket);
    const dry = await runCli(ws, ['lake', 'tidy', 'ev-recover', '--now', later]);
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`events-backfill_${DAY}_00_complete`);
    expect(dry.stdout).toContain('orphan.parquet');
    expect(dry.stdout).toMatch(/Would delete 2 partition\(s\) and 1 stray object\(s\)/);
    expect(await listKeys(s3, bucket)).toEqual(before);
    const applied = await runCli(ws, ['lake', 'tidy', 'ev-recover', '--now', later, '--apply']);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(await listKeys(s3, bucket)).toEqual([`events-backfill/someone-elses-file.csv`, `events/events_${DAY}_00#0.json.gz`]);
  });

  it('refuses a job without a retention (exit 2, naming the field)', async () => {
    ws.writeJob(
      'no-ret',
      'name: no-ret\nunit: hour\nsource:\n  connection: warehouse\n  query: select 1\ntarget:\n  kind: s3\n  connection: lake\n  path: "x-backfill/x_{date}_{hour}"\nwrite_mode: overwrite-partition\n',
    );
    const r = await runCli(ws, ['lake', 'tidy', 'no-ret']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('backfill_retention_days');
  });
});

describe('snapshot and restore keep tags and metadata', () => {
  it('a snapshot copy and a restored object carry the backfill tags', async () => {
    const r = await runCli(ws, ['ev-recover', '--from', '2026-01-20T00', '--to', '2026-01-20T01', '--run-id', 'tidy-run-2']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const snap = await runCli(ws, ['snapshot', 'ev-recover', '--from', '2026-01-20T00', '--to', '2026-01-20T01', '--run-id', 'snap-1']);
    expect(snap.code, snap.stdout + snap.stderr).toBe(0);
    const stem = `events-backfill/events-backfill_${DAY}_00`;
    const manifest = await manifestOf(s3, bucket, stem);
    const key = manifest?.objects[0]?.key ?? '';
    const expected = { source: 'backfill', run_id: 'tidy-run-2', plan_hash: manifest?.plan_hash };
    expect(await tagsOf(s3, bucket, `_snapshots/snap-1/${key}`)).toEqual(expected);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'clobbered' }));
    const restored = await runCli(ws, ['restore', '--run-id', 'snap-1']);
    expect(restored.code, restored.stdout + restored.stderr).toBe(0);
    expect(await tagsOf(s3, bucket, key)).toEqual(expected);
  });
});
