/**
 * Replication lag on a real streaming replica: a second embedded PostgreSQL following a
 * primary. With replay paused (pg_wal_replay_pause) the backfill halts within one partition,
 * says the measured lag, and completes on resume once the replica catches up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import Database from 'better-sqlite3';
import { startEmbeddedPostgres, freePort, type RunningPg } from '../../electron/engine/sandbox/embeddedPostgres.ts';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { makeWorkspace, runCli, type Workspace } from '../support/workspace.ts';

let primary: RunningPg;
let replica: RunningPg;
let ws: Workspace;
const password = 'replication-test';

async function connect(server: RunningPg, database = 'postgres'): Promise<pg.Client> {
  const c = new pg.Client({ host: '127.0.0.1', port: server.info.port, user: 'postgres', password, database });
  c.on('error', () => undefined); // servers stop under it at teardown
  await c.connect();
  return c;
}

beforeAll(async () => {
  const base = join(tmpdir(), `bfr-replica-${process.pid}`);
  const primaryDir = join(base, 'primary');
  const replicaDir = join(base, 'replica');
  execFileSync('rm', ['-rf', base]);
  // persistent: the data folder must survive the stop below, to be copied.
  // Not `fast`: with synchronous_commit off, WAL reaches the replica only when the WAL writer
  // flushes (every 200 ms), and lag would show partitions late.
  primary = await startEmbeddedPostgres({
    name: 'primary',
    dir: primaryDir,
    password,
    persistent: true,
    extraFlags: ['-c', 'wal_level=replica'],
  });
  const c = await connect(primary);
  await c.query('create database warehouse');
  await c.end();
  const w = await connect(primary, 'warehouse');
  await seedWarehouse(w);
  await w.end();
  // A cold copy of the primary becomes the replica: stop, copy, mark as standby, start both.
  await primary.stop();
  execFileSync('rm', ['-rf', replicaDir]);
  execFileSync('cp', ['-a', primaryDir, replicaDir]);
  const replicaPort = await freePort();
  writeFileSync(join(replicaDir, 'standby.signal'), '');
  appendFileSync(
    join(replicaDir, 'postgresql.auto.conf'),
    `\nprimary_conninfo = 'host=127.0.0.1 port=${primary.info.port} user=postgres password=${password}'\nhot_standby = on\n`,
  );
  primary = await startEmbeddedPostgres({ name: 'primary', dir: primaryDir, password, port: primary.info.port, persistent: true });
  replica = await startEmbeddedPostgres({ name: 'replica', dir: replicaDir, password, port: replicaPort, persistent: true, fast: true });
  ws = makeWorkspace('replica', { PG_PASSWORD: password });
  ws.writeConfig(`connections:
  warehouse: { kind: postgres, url: 'postgres://postgres@127.0.0.1:${primary.info.port}/warehouse', password_env: PG_PASSWORD }
  replica: { kind: postgres, url: 'postgres://postgres@127.0.0.1:${replicaPort}/warehouse', password_env: PG_PASSWORD }
`);
  ws.writeJob(
    'orders',
    `name: orders
unit: day
source:
  connection: warehouse
  query: |
    select cast(paid_at as date) as order_date, customer_id, count(*)::bigint as orders, sum(paid_amount) as paid_amount
    from orders where paid_at >= :partition_start and paid_at < :partition_end group by 1, 2
target: { connection: warehouse, table: mart.mart_order_daily, partition_column: order_date, key: [order_date, customer_id] }
write_mode: overwrite-partition
`,
  );
}, 120_000);

afterAll(async () => {
  await replica?.stop().catch(() => undefined);
  await primary?.stop().catch(() => undefined);
  execFileSync('rm', ['-rf', join(tmpdir(), `bfr-replica-${process.pid}`)]);
});

function published(runId: string): number {
  const sqlite = new Database(ws.db, { readonly: true });
  const row = sqlite.prepare(`select count(*) as n from partitions where run_id = ? and status = 'published'`).get(runId) as { n: number };
  sqlite.close();
  return row.n;
}

describe('replication lag', () => {
  it('halts within one partition when the replica stops replaying, and completes on resume', async () => {
    const r = await connect(replica, 'warehouse');
    expect((await r.query<{ standby: boolean }>('select pg_is_in_recovery() as standby')).rows[0]?.standby).toBe(true);
    // A write the replica replays first, so it has a last replayed commit to measure from.
    const p = await connect(primary, 'warehouse');
    await p.query('create table replica_ping (at timestamptz default now())');
    await p.query('insert into replica_ping default values');
    await p.end();
    for (let i = 0; i < 100; i++) {
      const seen = await r.query<{ t: string | null }>(`select to_regclass('replica_ping')::text as t`);
      if (seen.rows[0]?.t) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    await r.query('select pg_wal_replay_pause()');
    await new Promise((res) => setTimeout(res, 1500)); // the last replayed commit is now > 1 s old
    const args = [
      'orders',
      '--from',
      '2026-05-01',
      '--to',
      '2026-05-11',
      '--run-id',
      'lag-1',
      '--replica',
      'replica',
      '--max-replication-lag-s',
      '1',
    ];
    const started = Date.now();
    const halted = await runCli(ws, args);
    const haltMs = Date.now() - started;
    expect(halted.code, halted.stdout + halted.stderr).toBe(3);
    expect(halted.stdout).toMatch(/replication lag: \d+\.\d s on replica "replica" > 1 s/);
    // WAL reaches the replica asynchronously after a commit: the lag shows at the latest one
    // partition later, and the run halts at that partition's boundary.
    expect(published('lag-1')).toBeLessThanOrEqual(2);
    const haltedAfter = published('lag-1');
    await r.query('select pg_wal_replay_resume()');
    // Let the replica catch up before resuming.
    for (let i = 0; i < 50; i++) {
      const lag = await r.query<{ behind: boolean }>(
        'select pg_last_wal_receive_lsn() is distinct from pg_last_wal_replay_lsn() as behind',
      );
      if (!lag.rows[0]?.behind) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    await r.end();
    const resumed = await runCli(ws, ['--resume', '--run-id', 'lag-1']);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(published('lag-1')).toBe(10);
    console.info(`replication lag: halted ${haltMs} ms after start with ${haltedAfter} partition(s) published`);
  });

  it('a resume with a longer pause and a higher lag limit retunes the run: applied, audited, in the note', async () => {
    const r = await connect(replica, 'warehouse');
    await r.query('select pg_wal_replay_pause()');
    await new Promise((res) => setTimeout(res, 1500));
    try {
      const args = ['orders', '--from', '2026-05-11', '--to', '2026-05-16', '--run-id', 'lag-2', '--replica', 'replica'];
      const halted = await runCli(ws, [...args, '--max-replication-lag-s', '1']);
      expect(halted.code, halted.stdout + halted.stderr).toBe(3);
      const toDo = 5 - published('lag-2');
      expect(toDo).toBeGreaterThanOrEqual(3);
      // The replica is still paused: only the retuned threshold lets the resume through.
      const started = Date.now();
      const resumed = await runCli(ws, ['--resume', '--run-id', 'lag-2', '--sleep-ms', '300', '--max-replication-lag-s', '3600']);
      const resumeMs = Date.now() - started;
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('Retuned run lag-2 for this resume: throttle.sleep_ms 0 → 300; stop.max_replication_lag_s 1 → 3600');
      expect(published('lag-2')).toBe(5);
      expect(resumeMs).toBeGreaterThanOrEqual((toDo - 1) * 300); // the pause between partitions was applied
      const sqlite = new Database(ws.db, { readonly: true });
      const settings = JSON.parse(
        (sqlite.prepare(`select settings_json as s from runs where run_id = 'lag-2'`).get() as { s: string }).s,
      ) as Record<string, unknown>;
      const audit = sqlite.prepare(`select detail_json as d from audit_log where run_id = 'lag-2' and event = 'run.retuned'`).all() as {
        d: string;
      }[];
      sqlite.close();
      expect(settings).toMatchObject({ sleep_ms: 300, stop: { max_replication_lag_s: 3600 } });
      expect(audit.map((a) => (JSON.parse(a.d) as { summary: string; via: string }).via)).toEqual(['resume']);
      // The signed plan is unchanged: the note names the retune in the run's history.
      const note = await runCli(ws, ['export', '--run-id', 'lag-2', '--format', 'md']);
      expect(note.code, note.stderr).toBe(0);
      expect(note.stdout).toMatch(/run\.retuned.*throttle\.sleep_ms 0 → 300; stop\.max_replication_lag_s 1 → 3600/);
    } finally {
      await r.query('select pg_wal_replay_resume()');
      await r.end();
    }
  });
});
