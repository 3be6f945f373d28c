/**
 * The other S3 combinations through the built `run-backfill`: S3 → S3 (the raw backfill
 * prefix into a refined partition) and S3 → Postgres (JSON Lines loaded with COPY inside the
 * partition's transaction), with their dry runs. The chain ends where it began: the table
 * loaded back from S3 equals the table that was exported.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, runCli, type Workspace } from '../support/workspace.ts';
import {
  createTestBucket,
  getText,
  listKeys,
  mixedConfig,
  openUploads,
  putRecords,
  putObject,
  s3Env,
  testS3Client,
} from '../support/s3.ts';
import { eventsMd5, exportJob, loadJob, PROJECT, refineJob, seedEvents } from '../support/events.ts';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;

let db: TestDb;
let ws: Workspace;
let s3: S3Client;
let bucket: string;

const RAW = `${PROJECT}-backfill/${PROJECT}-backfill_{date}_{hour}`;
const REFINED = 'refined/event/dt={date}/hour={hour}/';
const FROM = '2026-01-20T00:00Z';
const TO = '2026-01-20T06:00Z';
const range = ['--from', '2026-01-20T00', '--to', '2026-01-20T06'];

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 's3flows');
  await seedEvents(db.client, 'events', { from: '2026-01-20', hours: 6, perHour: 120, seed: 11 });
  await db.client.query('create table events_loaded (like events including all)');
  s3 = testS3Client(inject('s3'));
  bucket = await createTestBucket(s3, 'lake');
  ws = makeWorkspace('s3flows', { WAREHOUSE_PASSWORD: db.password, ...s3Env(inject('s3')) });
  ws.writeConfig(
    mixedConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }, { lake: { bucket, endpoint: inject('s3').endpoint } }),
  );
  ws.writeJob('ev-export', exportJob('ev-export', { path: RAW, recordsPerObject: 50 }));
  ws.writeJob('ev-refine', refineJob('ev-refine', { from: RAW, to: REFINED }));
  ws.writeJob('ev-load', loadJob('ev-load', { from: REFINED, table: 'events_loaded' }));
  const exported = await runCli(ws, ['ev-export', ...range, '--run-id', 'flow-export']);
  expect(exported.code, exported.stderr).toBe(0);
});

afterAll(async () => {
  await db?.drop();
  s3?.destroy();
});

function jsonLines(
  stdout: string,
): { type: string; partitions?: { partition: { key: string }; source: Record<string, unknown>; target: Record<string, unknown> }[] }[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as never);
}

describe('S3 → S3: raw backfill prefix into a refined partition', () => {
  it('dry run: objects, bytes and records per partition, and what the target holds now', async () => {
    const r = await runCli(ws, ['ev-refine', ...range, '--run-id', 'flow-refine', '--dry-run', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const rows = jsonLines(r.stdout).find((l) => l.type === 'dry-run')?.partitions ?? [];
    expect(rows.map((p) => p.partition.key)).toEqual([
      '2026-01-20T00',
      '2026-01-20T01',
      '2026-01-20T02',
      '2026-01-20T03',
      '2026-01-20T04',
      '2026-01-20T05',
    ]);
    const rawKeys = await listKeys(s3, bucket, `${PROJECT}-backfill/${PROJECT}-backfill_2026-01-20_02#`);
    expect(rows[2]?.source).toEqual({ objects: 3, bytes: expect.any(Number) as number, records: 120 });
    expect(rawKeys).toHaveLength(3);
    expect(rows[2]?.target).toEqual({ objects: 0, bytes: 0, records: 0, published_by: null });
    expect(await listKeys(s3, bucket, 'refined/')).toEqual([]);
  });

  it('publishes every hour, record for record, and reconciles', async () => {
    const r = await runCli(ws, ['ev-refine', ...range, '--run-id', 'flow-refine']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Reconciliation: 6 partition(s) agree');
    const manifest = JSON.parse(await getText(s3, bucket, 'refined/event/dt=2026-01-20/hour=03/_complete')) as {
      records: number;
      objects: { key: string }[];
      source: unknown;
    };
    expect(manifest.records).toBe(120);
    expect(manifest.source).toEqual({ records: 120, objects: 3, bytes: expect.any(Number) as number });
    expect(manifest.objects.map((o) => o.key)).toEqual([
      expect.stringMatching(/^refined\/event\/dt=2026-01-20\/hour=03\/part-0\.[0-9a-f]{16}\.json\.gz$/),
    ]);
    expect(openUploads(inject('s3'), bucket)).toEqual([]);
  });
});

describe('S3 → Postgres', () => {
  it('dry run measures the objects and the table partition', async () => {
    const r = await runCli(ws, ['ev-load', ...range, '--run-id', 'flow-load', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/2026-01-20T00\s+1\s+\d+\s+120\s+–\s+–\s+0\s+\+120/);
  });

  it('loads the refined records; the table equals the one exported', async () => {
    const r = await runCli(ws, ['ev-load', ...range, '--run-id', 'flow-load']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Reconciliation: 6 partition(s) agree');
    expect(await eventsMd5(db.client, 'events_loaded', FROM, TO)).toBe(await eventsMd5(db.client, 'events', FROM, TO));
    const marks = await db.client.query<{ n: string }>(
      `select count(*)::text as n from backfill_runbook.partition_marks where run_id = 'flow-load'`,
    );
    expect(marks.rows[0]?.n).toBe('6');
  });

  it('reads an Amplitude-style layout by listing when the marker is not a manifest', async () => {
    const stem = `${PROJECT}/${PROJECT}_2026-01-21_07`;
    await putRecords(s3, bucket, `${stem}#0.json.gz`, [{ event_id: 900001, event_type: 'view', event_time: '2026-01-21T07:10:00Z' }]);
    await putRecords(s3, bucket, `${stem}#1.json.gz`, [
      { event_id: 900002, event_type: 'buy', event_time: '2026-01-21T07:20:00Z', amount: 12.5, extra_field: 'ignored' },
    ]);
    await putObject(s3, bucket, `${stem}_complete`, '');
    // hour 17's files must not be read as hour 1's
    await putRecords(s3, bucket, `${PROJECT}/${PROJECT}_2026-01-21_17#0.json.gz`, [
      { event_id: 900003, event_type: 'x', event_time: '2026-01-21T17:00:00Z' },
    ]);
    ws.writeJob('ev-load-auto', loadJob('ev-load-auto', { from: `${PROJECT}/${PROJECT}_{date}_{hour}`, table: 'events_loaded' }));
    const r = await runCli(ws, ['ev-load-auto', '--from', '2026-01-21T07', '--to', '2026-01-21T08', '--run-id', 'flow-auto']);
    expect(r.code, r.stderr).toBe(0);
    const rows = await db.client.query(
      `select event_id::int, event_type, amount::text, user_id from events_loaded where event_time >= '2026-01-21' order by 1`,
    );
    expect(rows.rows).toEqual([
      { event_id: 900001, event_type: 'view', amount: null, user_id: null },
      { event_id: 900002, event_type: 'buy', amount: '12.50', user_id: null },
    ]);
  });

  it('refuses a partition whose _complete marker is missing, and says how to read it anyway', async () => {
    const r = await runCli(ws, ['ev-load-auto', '--from', '2026-01-21T17', '--to', '2026-01-21T18', '--run-id', 'flow-incomplete']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `s3://${bucket}/${PROJECT}/${PROJECT}_2026-01-21_17_complete does not exist: partition 2026-01-21T17 is not complete (or has no data) at the source; wait for it, or set source.require_complete: false to read whatever is there`,
    );
  });

  it('rolls the whole partition back when a record is not JSON', async () => {
    const stem = `${PROJECT}/${PROJECT}_2026-01-21_09`;
    await putRecords(s3, bucket, `${stem}#0.json`, [{ event_id: 900010, event_type: 'view', event_time: '2026-01-21T09:00:00Z' }]);
    await putObject(
      s3,
      bucket,
      `${stem}#1.json`,
      '{"event_id": 900011, "event_type": "view", "event_time": "2026-01-21T09:01:00Z"}\n{not json\n',
    );
    await putObject(s3, bucket, `${stem}_complete`, '');
    const r = await runCli(ws, ['ev-load-auto', '--from', '2026-01-21T09', '--to', '2026-01-21T10', '--run-id', 'flow-bad']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`s3://${bucket}/${stem}#1.json line 2 is not JSON`);
    const rows = await db.client.query(
      `select count(*)::int as n from events_loaded where event_time >= '2026-01-21T09:00Z' and event_time < '2026-01-21T10:00Z'`,
    );
    expect(rows.rows[0]).toEqual({ n: 0 });
  });
});
