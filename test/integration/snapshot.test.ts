/**
 * `run-backfill snapshot` and `run-backfill restore` through the built CLI: an S3 target by
 * server-side copy to `_snapshots/<run id>/`, a Postgres target into `backfill_runbook_snapshots`.
 * A restore puts each partition back exactly — keys, sizes and bytes; rows and marker.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import type { S3Client } from '@aws-sdk/client-s3';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, runCli, type Workspace } from '../support/workspace.ts';
import { createTestBucket, getBytes, listKeys, mixedConfig, s3Env, testS3Client } from '../support/s3.ts';
import { eventsMd5, exportJob, PROJECT, seedEvents } from '../support/events.ts';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;

let db: TestDb;
let ws: Workspace;
let s3: S3Client;
let bucket: string;

const ROOT = `${PROJECT}-backfill/`;
const RAW = `${ROOT}${PROJECT}-backfill_{date}_{hour}`;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'snapshot');
  await seedEvents(db.client, 'events', { from: '2026-01-20', hours: 4, perHour: 90, seed: 5 });
  await db.client.query('create table events_copy (like events including all)');
  s3 = testS3Client(inject('s3'));
  bucket = await createTestBucket(s3, 'snapshots');
  ws = makeWorkspace('snapshot', { WAREHOUSE_PASSWORD: db.password, ...s3Env(inject('s3')) });
  ws.writeConfig(
    mixedConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }, { lake: { bucket, endpoint: inject('s3').endpoint } }),
  );
  ws.writeJob('raw', exportJob('raw', { path: RAW, recordsPerObject: 40 }));
  ws.writeJob(
    'copy',
    `name: copy
unit: hour
source:
  connection: warehouse
  query: select * from events where event_time >= :partition_start and event_time < :partition_end
target:
  connection: warehouse
  table: events_copy
  partition_column: event_time
  key: [event_id]
write_mode: overwrite-partition
validation:
  - name: rows
    source: select count(*) as rows from events where event_time >= :partition_start and event_time < :partition_end
    target: select count(*) as rows from events_copy where event_time >= :partition_start and event_time < :partition_end
`,
  );
});

afterAll(async () => {
  await db?.drop();
  s3?.destroy();
});

/** Every object under the backfill prefix with its bytes, for exact comparison. */
async function state(): Promise<Map<string, string>> {
  const keys = await listKeys(s3, bucket, ROOT);
  const out = new Map<string, string>();
  for (const key of keys) out.set(key, (await getBytes(s3, bucket, key)).toString('base64'));
  return out;
}

function evidenceKinds(): { kind: string; run: string | null; body: { runId?: string; target?: string } }[] {
  const sqlite = new Database(ws.db, { readonly: true });
  try {
    return (
      sqlite.prepare(`select kind, run_id as run, body_json from evidence where kind in ('snapshot', 'restore') order by id`).all() as {
        kind: string;
        run: string | null;
        body_json: string;
      }[]
    ).map((r) => ({
      kind: r.kind,
      run: r.run,
      body: JSON.parse(r.body_json) as { runId?: string; target?: string },
    }));
  } finally {
    sqlite.close();
  }
}

describe('S3 target', () => {
  it('snapshots by server-side copy and restores every partition exactly', async () => {
    const first = await runCli(ws, ['raw', '--from', '2026-01-20T00', '--to', '2026-01-20T02', '--run-id', 'raw-1']);
    expect(first.code, first.stderr).toBe(0);
    const before = await state();
    const range = ['--from', '2026-01-20T00', '--to', '2026-01-20T03'];
    const snap = await runCli(ws, ['snapshot', 'raw', ...range, '--run-id', 'raw-2', '--json']);
    expect(snap.code, snap.stderr).toBe(0);
    const record = snap.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; partitions?: { key: string; items: number }[]; location?: string })
      .find((l) => l.type === 'snapshot');
    expect(record?.location).toBe(`s3://${bucket}/_snapshots/raw-2/`);
    // 3 objects and the manifest per published hour; hour 02 has nothing yet
    expect(record?.partitions?.map((p) => [p.key, p.items])).toEqual([
      ['2026-01-20T00', 4],
      ['2026-01-20T01', 4],
      ['2026-01-20T02', 0],
    ]);
    const copies = await listKeys(s3, bucket, '_snapshots/raw-2/');
    expect(copies.filter((k) => !k.includes('/_manifests/'))).toEqual([...before.keys()].map((k) => `_snapshots/raw-2/${k}`).sort());
    expect(copies.filter((k) => k.includes('/_manifests/'))).toEqual([
      '_snapshots/raw-2/_manifests/2026-01-20T00.json',
      '_snapshots/raw-2/_manifests/2026-01-20T01.json',
      '_snapshots/raw-2/_manifests/2026-01-20T02.json',
    ]);

    await db.client.query(`update events set note = 'rewritten' where event_time < '2026-01-20T03:00Z'`);
    const run = await runCli(ws, ['raw', ...range, '--run-id', 'raw-2']);
    expect(run.code, run.stderr).toBe(0);
    expect(await state()).not.toEqual(before);

    const restored = await runCli(ws, ['restore', '--run-id', 'raw-2']);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/2026-01-20T02\s+0\s+4/);
    expect(await state()).toEqual(before);
    expect(evidenceKinds()).toEqual([
      { kind: 'snapshot', run: null, body: expect.objectContaining({ runId: 'raw-2', target: 's3' }) as never },
      { kind: 'restore', run: 'raw-2', body: expect.objectContaining({ runId: 'raw-2', target: 's3' }) as never },
    ]);
  });

  it('restores one partition with --partition, and refuses one the snapshot does not have', async () => {
    const run = await runCli(ws, ['raw', '--from', '2026-01-20T00', '--to', '2026-01-20T03', '--run-id', 'raw-2b']);
    expect(run.code, run.stderr).toBe(0);
    const hour1 = async () => (await listKeys(s3, bucket, `${ROOT}${PROJECT}-backfill_2026-01-20_01`)).join(',');
    const after = await hour1();
    const r = await runCli(ws, ['restore', '--run-id', 'raw-2', '--partition', '2026-01-20T00']);
    expect(r.code, r.stderr).toBe(0);
    expect(await hour1()).toBe(after);
    const bad = await runCli(ws, ['restore', '--run-id', 'raw-2', '--partition', '2026-01-21T00']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'the snapshot of run raw-2 has no partition "2026-01-21T00"; it has: 2026-01-20T00, 2026-01-20T01, 2026-01-20T02',
    );
    const none = await runCli(ws, ['restore', '--run-id', 'never-snapshotted']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no snapshot on record for run "never-snapshotted"');
  });
});

describe('Postgres target', () => {
  it('snapshots rows with count and checksum, and restores rows and marker exactly', async () => {
    const range = ['--from', '2026-01-20T00', '--to', '2026-01-20T03'];
    await db.client.query(
      `insert into events_copy select event_id, user_id, 'stale', event_time, amount, note, props from events where event_time < '2026-01-20T02:00Z'`,
    );
    const first = await runCli(ws, ['copy', '--from', '2026-01-20T00', '--to', '2026-01-20T01', '--run-id', 'copy-1']);
    expect(first.code, first.stderr).toBe(0);
    const md5 = () => eventsMd5(db.client, 'events_copy', '2026-01-20T00:00Z', '2026-01-20T03:00Z');
    const marks = async (): Promise<unknown[]> =>
      (
        await db.client.query<Record<string, unknown>>(
          `select partition_key, run_id, rows_written::int from backfill_runbook.partition_marks where target_table = 'public.events_copy' order by 1`,
        )
      ).rows;
    const [beforeRows, beforeMarks] = [await md5(), await marks()];

    const snap = await runCli(ws, ['snapshot', 'copy', ...range, '--run-id', 'copy-2']);
    expect(snap.code, snap.stderr).toBe(0);
    expect(snap.stdout).toMatch(/2026-01-20T00\s+90\s+md5:[0-9a-f]{32}/);
    const saved = await db.client.query(
      `select partition_key, rows::int, (mark->>'run_id') as mark from backfill_runbook_snapshots.snapshots where run_id = 'copy-2' order by 1`,
    );
    expect(saved.rows).toEqual([
      { partition_key: '2026-01-20T00', rows: 90, mark: 'copy-1' },
      { partition_key: '2026-01-20T01', rows: 90, mark: null },
      { partition_key: '2026-01-20T02', rows: 0, mark: null },
    ]);

    const run = await runCli(ws, ['copy', ...range, '--run-id', 'copy-2']);
    expect(run.code, run.stderr).toBe(0);
    expect(await md5()).toBe(await eventsMd5(db.client, 'events', '2026-01-20T00:00Z', '2026-01-20T03:00Z'));

    const restored = await runCli(ws, ['restore', '--run-id', 'copy-2']);
    expect(restored.code, restored.stderr).toBe(0);
    expect(await md5()).toBe(beforeRows);
    expect(await marks()).toEqual(beforeMarks);
  });
});
