/**
 * Replication lag on a real streaming replica: a second embedded PostgreSQL following a
 * primary (a cold copy of it: the pg_basebackup on this machine is older than the embedded
 * server and refuses it). With replay paused (pg_wal_replay_pause) for a few seconds mid-run
 * the backfill throttles — finishes the partition in flight, starts no other — and goes on by
 * itself once replay resumes, ending equal to the oracle with the episode in the ledger. Paused
 * beyond --max-throttle-s it halts (exit 3); over the critical level it halts at once.
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
import { buildOracle, martMd5 } from '../support/oracle.ts';
import { makeWorkspace, runCli, startCli, type Workspace } from '../support/workspace.ts';

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
  await buildOracle(w);
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
  // Six seconds a partition: a halt at once lands inside one, which must roll back.
  ws.writeJob(
    'slow-orders',
    `name: slow-orders
unit: day
source:
  connection: warehouse
  query: |
    select cast(paid_at as date) as order_date, customer_id, count(*)::bigint as orders, sum(paid_amount) as paid_amount
    from orders cross join (select pg_sleep(6)) as pause
    where paid_at >= :partition_start and paid_at < :partition_end group by 1, 2
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

type JsonEvent = { type: string; reason?: string; outcome?: string; key?: string; over?: { value: number | null; max?: number }[] };

function jsonEvents(stdout: string): JsonEvent[] {
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as JsonEvent);
}

function auditEvents(runId: string, like: string): { event: string; detail: Record<string, unknown> }[] {
  const sqlite = new Database(ws.db, { readonly: true });
  const rows = sqlite
    .prepare(`select event, detail_json as d from audit_log where run_id = ? and event like ? order by seq`)
    .all(runId, like) as {
    event: string;
    d: string;
  }[];
  sqlite.close();
  return rows.map((r) => ({ event: r.event, detail: JSON.parse(r.d) as Record<string, unknown> }));
}

/** Resolves when `text` first appears on the child's stdout. */
function waitForOutput(child: ReturnType<typeof startCli>['child'], text: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = '';
    child.stdout?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(text)) resolve();
    });
  });
}

/** A write the replica replays first, so it has a last replayed commit to measure lag from. */
async function pingReplica(r: pg.Client): Promise<void> {
  const p = await connect(primary, 'warehouse');
  await p.query('create table if not exists replica_ping (at timestamptz default now())');
  await p.query('insert into replica_ping default values');
  const lsn = (await p.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]?.lsn;
  await p.end();
  for (let i = 0; i < 100; i++) {
    const seen = await r.query<{ ok: boolean }>(`select pg_last_wal_replay_lsn() >= $1::pg_lsn as ok`, [lsn]);
    if (seen.rows[0]?.ok) return;
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function caughtUp(r: pg.Client): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const lag = await r.query<{ behind: boolean }>('select pg_last_wal_receive_lsn() is distinct from pg_last_wal_replay_lsn() as behind');
    if (!lag.rows[0]?.behind) return;
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Rows of the mart for [from, to) made wrong, so only a backfill makes them equal to the oracle again. */
async function corruptMart(from: string, to: string): Promise<void> {
  const p = await connect(primary, 'warehouse');
  await p.query(`update mart.mart_order_daily set orders = orders + 1000 where order_date >= $1 and order_date < $2`, [from, to]);
  expect(await martMd5(p, from, to)).not.toBe(await martMd5(p, from, to, 'oracle.mart_order_daily'));
  await p.end();
}

async function equalsOracle(from: string, to: string): Promise<boolean> {
  const p = await connect(primary, 'warehouse');
  const equal = (await martMd5(p, from, to)) === (await martMd5(p, from, to, 'oracle.mart_order_daily'));
  await p.end();
  return equal;
}

describe('replication lag', () => {
  it('replay paused for a few seconds mid-run: the run throttles, then finishes by itself, equal to the oracle', async () => {
    const r = await connect(replica, 'warehouse');
    expect((await r.query<{ standby: boolean }>('select pg_is_in_recovery() as standby')).rows[0]?.standby).toBe(true);
    await pingReplica(r);
    await corruptMart('2026-05-01', '2026-05-13');
    const { child, done } = startCli(ws, [
      'orders',
      '--from',
      '2026-05-01',
      '--to',
      '2026-05-13',
      '--run-id',
      'lag-throttle',
      '--replica',
      'replica',
      '--max-replication-lag-s',
      '1',
      '--sleep-ms',
      '400',
      '--json',
    ]);
    await waitForOutput(child, '"type":"partition-published"');
    await r.query('select pg_wal_replay_pause()');
    const paused = Date.now();
    await waitForOutput(child, '"type":"throttled"');
    const throttledAfter = Date.now() - paused;
    await new Promise((res) => setTimeout(res, 2000)); // a few seconds of a replica that does not replay
    await r.query('select pg_wal_replay_resume()');
    const resumed = Date.now();
    const result = await done;
    const finishedAfter = Date.now() - resumed;
    await r.end();
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(published('lag-throttle')).toBe(12);
    expect(await equalsOracle('2026-05-01', '2026-05-13')).toBe(true);
    const events = jsonEvents(result.stdout);
    const from = events.findIndex((e) => e.type === 'throttled');
    const to = events.findIndex((e) => e.type === 'throttle-ended');
    expect(from).toBeGreaterThan(-1);
    expect(to).toBeGreaterThan(from);
    expect(events[from]?.reason).toMatch(/^replication lag on replica "replica": \d+(\.\d)? s > 1 s$/);
    expect(events[to]?.outcome).toBe('resumed');
    // While throttled no partition started; partitions resumed after it, by themselves.
    expect(events.slice(from, to).filter((e) => e.type === 'partition-started')).toEqual([]);
    expect(events.slice(to).filter((e) => e.type === 'partition-started').length).toBeGreaterThan(0);
    // The episode is in the ledger: its start, and its end with how long and at what lag.
    // On a busy machine the replica can fall over 1 s behind again while it catches up: a
    // second episode is real behaviour, not a flap (each one waited out its settle time).
    const episode = auditEvents('lag-throttle', 'run.throttle%');
    const episodes = episode.length / 2;
    expect(episodes).toBeGreaterThanOrEqual(1);
    expect(episode.map((e) => e.event)).toEqual(Array.from({ length: episodes }, () => ['run.throttled', 'run.throttle-ended']).flat());
    for (const ended of episode.filter((e) => e.event === 'run.throttle-ended')) {
      expect(ended.detail).toMatchObject({ outcome: 'resumed' });
      expect(Number(ended.detail.throttledMs)).toBeGreaterThan(0);
      expect(String(ended.detail.reason)).toMatch(/replication lag on replica "replica": \d+(\.\d)? s > 1 s/);
    }
    const status = await runCli(ws, ['status', '--run-id', 'lag-throttle']);
    expect(status.stdout).toMatch(new RegExp(`throttled ${episodes} time\\(s\\)`));
    // The incident note lists the episode, and counts it beside the stops.
    const note = await runCli(ws, ['export', '--run-id', 'lag-throttle', '--format', 'md']);
    expect(note.code, note.stderr).toBe(0);
    expect(note.stdout).toMatch(
      /## Throttle episodes\n\n\| since \| for \| ended \| signals \(at their worst\) \|\n.*\n\| \S+ \| \d+\.\d s \| resumed by itself \| replication lag on replica "replica": \d+(\.\d)? s > 1 s \|/,
    );
    expect(note.stdout).toContain(`- **Throttle count:** ${episodes}`);
    console.info(
      `replication lag: throttled ${throttledAfter} ms after replay paused; finished ${finishedAfter} ms after it resumed (check interval 1000 ms, settle 3000 ms; ${episodes} episode(s))`,
    );
  });

  it('paused beyond --max-throttle-s: the run halts (exit 3) and completes on resume once the replica caught up', async () => {
    const r = await connect(replica, 'warehouse');
    await pingReplica(r);
    await r.query('select pg_wal_replay_pause()');
    try {
      const args = ['orders', '--from', '2026-05-13', '--to', '2026-05-23', '--run-id', 'lag-max', '--replica', 'replica'];
      const halted = await runCli(ws, [...args, '--max-replication-lag-s', '1', '--max-throttle-s', '3', '--sleep-ms', '300']);
      expect(halted.code, halted.stdout + halted.stderr).toBe(3);
      expect(halted.stdout).toMatch(
        /throttled for \d+\.\d s, longer than max_throttle_s 3: replication lag on replica "replica": \d+(\.\d)? s > 1 s/,
      );
      expect(halted.stdout).toContain('Resume with: run-backfill --resume --run-id lag-max');
      expect(published('lag-max')).toBeLessThan(10);
      expect(auditEvents('lag-max', 'run.throttle-ended')[0]?.detail).toMatchObject({ outcome: 'halted' });
    } finally {
      await r.query('select pg_wal_replay_resume()');
    }
    await caughtUp(r);
    await r.end();
    const resumed = await runCli(ws, ['--resume', '--run-id', 'lag-max']);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(published('lag-max')).toBe(10);
  });

  it('over the critical level: the run halts at once (exit 3), rolling back the partition in flight', async () => {
    const r = await connect(replica, 'warehouse');
    await caughtUp(r);
    const args = ['slow-orders', '--from', '2026-05-23', '--to', '2026-05-27', '--run-id', 'lag-critical', '--replica', 'replica'];
    // The default max_throttle_s is 30 minutes: only the critical level can end this run soon.
    const { child, done } = startCli(ws, [...args, '--max-replication-lag-s', '0.5', '--critical-replication-lag-s', '1', '--json']);
    try {
      await waitForOutput(child, '"type":"partition-started"');
      // Replay stops while the first partition is written (six seconds) and production goes on
      // committing: its WAL reaches the replica and is not replayed, so the lag grows past the
      // critical level mid-partition.
      await pingReplica(r);
      await r.query('select pg_wal_replay_pause()');
      const paused = Date.now();
      const traffic = await connect(primary, 'warehouse');
      let running = true;
      const writes = (async () => {
        while (running) {
          await traffic.query('insert into replica_ping default values');
          await new Promise((res) => setTimeout(res, 200));
        }
      })();
      const halted = await done;
      running = false;
      await writes;
      await traffic.end();
      console.info(`replication lag (critical): the run ended ${Date.now() - paused} ms after replay paused`);
      expect(halted.code, halted.stdout + halted.stderr).toBe(3);
      const events = jsonEvents(halted.stdout);
      expect(events.find((e) => e.type === 'stopping')?.reason).toMatch(
        /^critical level: replication lag on replica "replica": \d+(\.\d)? s > 1 s \(critical\)$/,
      );
      // Rolled back at once, instead of finishing as a throttle would let it.
      expect(published('lag-critical')).toBe(0);
      const sqlite = new Database(ws.db, { readonly: true });
      const first = sqlite
        .prepare(`select status, attempt from partitions where run_id = 'lag-critical' and partition_key = '2026-05-23'`)
        .get();
      sqlite.close();
      expect(first).toEqual({ status: 'pending', attempt: 1 });
      const fired = auditEvents('lag-critical', 'run.stop-condition');
      expect(fired.map((f) => f.detail.condition)).toEqual(['replication-lag']);
    } finally {
      await r.query('select pg_wal_replay_resume()');
      await r.end();
    }
  });

  it('a resume with a longer pause and a higher lag limit retunes the run: applied, audited, in the note', async () => {
    const r = await connect(replica, 'warehouse');
    await r.query('select pg_wal_replay_pause()');
    await new Promise((res) => setTimeout(res, 1500));
    try {
      const args = ['orders', '--from', '2026-06-11', '--to', '2026-06-21', '--run-id', 'lag-2', '--replica', 'replica'];
      const halted = await runCli(ws, [
        ...args,
        '--max-replication-lag-s',
        '1',
        '--max-throttle-s',
        '2',
        '--sleep-ms',
        '200',
        '--check-interval-ms',
        '250',
      ]);
      expect(halted.code, halted.stdout + halted.stderr).toBe(3);
      const toDo = 10 - published('lag-2');
      expect(toDo).toBeGreaterThanOrEqual(3);
      // The replica is still paused: only the retuned threshold lets the resume through.
      const started = Date.now();
      const resumed = await runCli(ws, ['--resume', '--run-id', 'lag-2', '--sleep-ms', '300', '--max-replication-lag-s', '3600']);
      const resumeMs = Date.now() - started;
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain(
        'Retuned run lag-2 for this resume: throttle.sleep_ms 200 → 300; stop.max_replication_lag_s 1 → 3600',
      );
      expect(published('lag-2')).toBe(10);
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
      expect(note.stdout).toMatch(/run\.retuned.*throttle\.sleep_ms 200 → 300; stop\.max_replication_lag_s 1 → 3600/);
    } finally {
      await r.query('select pg_wal_replay_resume()');
      await r.end();
    }
  });
});
