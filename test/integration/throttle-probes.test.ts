/**
 * Probes as throttle signals on a real PostgreSQL, against a Prometheus-compatible API and a
 * Burrow-style JSON endpoint served on 127.0.0.1: a value over its level throttles the run,
 * which goes on by itself once the value settles under it; a probe that cannot be measured
 * throttles too (never a silent pass); over a critical level the run halts at once. VACUUM on
 * the target table is a built-in probe. Probe SQL is user SQL: a write is refused before
 * anything runs, and a token that is not set is a configuration error.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { freePort } from '../../electron/engine/sandbox/embeddedPostgres.ts';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { jsonEvents, throttleWindow, waitForOutput } from '../support/cliOutput.ts';
import { startFakeMonitoring, type FakeMonitoring } from '../support/httpFakes.ts';
import { buildOracle, martMd5 } from '../support/oracle.ts';
import { adminClient, createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, pgConfig, runCli, startCli, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;
let monitoring: FakeMonitoring;

const JOB = `name: orders
unit: day
timezone: UTC
source:
  connection: warehouse
  query: |
    select cast(paid_at as date) as order_date, customer_id, count(*)::bigint as orders, sum(paid_amount) as paid_amount
    from orders where paid_at >= :partition_start and paid_at < :partition_end group by 1, 2
target: { connection: warehouse, table: mart.mart_order_daily, partition_column: order_date, key: [order_date, customer_id] }
write_mode: overwrite-partition
validation:
  - name: orders reconcile
    source: select count(*) as rows from orders where paid_at >= :partition_start and paid_at < :partition_end
    target: select coalesce(sum(orders), 0) as rows from mart.mart_order_daily where order_date >= :partition_start and order_date < :partition_end
`;

/** A plan file: the range, a pause between partitions, and the `stop:` section under test. */
function plan(runId: string, from: string, to: string, stop: string): string {
  return ws.writeFile(
    `${runId}.plan.yaml`,
    `request_id: ${runId}
reason: probe test
job: orders
range: { from: '${from}', to: '${to}' }
write_mode: overwrite-partition
throttle: { sleep_ms: 300 }
stop:
${stop}`,
  );
}

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'probes');
  await seedWarehouse(db.client);
  await buildOracle(db.client);
  monitoring = await startFakeMonitoring(10);
  ws = makeWorkspace('probes', { WAREHOUSE_PASSWORD: db.password, PROM_TOKEN: 'prom-secret-token' });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  ws.writeJob('orders', JOB);
});

afterAll(async () => {
  await monitoring?.close();
  await db?.drop();
});

function published(runId: string): number {
  const sqlite = new Database(ws.db, { readonly: true });
  const row = sqlite.prepare(`select count(*) as n from partitions where run_id = ? and status = 'published'`).get(runId) as { n: number };
  sqlite.close();
  return row.n;
}

async function corrupt(from: string, to: string): Promise<void> {
  await db.client.query(`update mart.mart_order_daily set orders = orders + 7 where order_date >= $1 and order_date < $2`, [from, to]);
}

async function equalsOracle(from: string, to: string): Promise<boolean> {
  return (await martMd5(db.client, from, to)) === (await martMd5(db.client, from, to, 'oracle.mart_order_daily'));
}

describe('probe signals', () => {
  it('a Prometheus probe over its level throttles the run; under it again, the run goes on by itself', async () => {
    monitoring.value = 10;
    await corrupt('2026-05-01', '2026-05-09');
    const file = plan(
      'prom-1',
      '2026-05-01',
      '2026-05-09',
      `  check_interval_ms: 200
  settle_ms: 600
  probes:
    - { kind: prometheus, name: db-cpu, url: '${monitoring.url}', query: 'avg(rate(node_cpu_seconds_total{mode!="idle"}[1m])) * 100', max: 80, critical: 95, bearer_token_env: PROM_TOKEN }
`,
    );
    const { child, done } = startCli(ws, ['--plan', file, '--json']);
    await waitForOutput(child, '"type":"partition-published"');
    monitoring.value = 90; // the operational DB is busy
    await waitForOutput(child, '"type":"throttled"');
    await new Promise((res) => setTimeout(res, 1200));
    monitoring.value = 30;
    const r = await done;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(published('prom-1')).toBe(8);
    expect(await equalsOracle('2026-05-01', '2026-05-09')).toBe(true);
    const events = jsonEvents(r.stdout);
    const { from, to, during } = throttleWindow(events);
    expect(events[from]?.reason).toBe('probe "db-cpu" (Prometheus): 90 > 80');
    expect(events[to]?.outcome).toBe('resumed');
    expect(during.filter((e) => e.type === 'partition-started')).toEqual([]);
    // the readings against both levels, as the app's chart draws them
    const readings = events.filter((e) => e.type === 'signals').flatMap((e) => e.readings ?? []);
    expect(readings).toContainEqual(expect.objectContaining({ signal: 'probe:db-cpu', value: 90, max: 80, critical: 95 }));
    // the query as written, with the token from the environment
    const asked = monitoring.received.filter((q) => q.path === '/api/v1/query');
    expect(asked[0]?.query.get('query')).toBe('avg(rate(node_cpu_seconds_total{mode!="idle"}[1m])) * 100');
    expect(asked[0]?.headers.authorization).toBe('Bearer prom-secret-token');
  });

  it('over its critical level the run halts at once (exit 3)', async () => {
    monitoring.value = 10;
    const file = plan(
      'prom-2',
      '2026-05-10',
      '2026-05-20',
      `  check_interval_ms: 200
  probes:
    - { kind: prometheus, name: db-cpu, url: '${monitoring.url}', query: 'cpu', max: 80, critical: 95 }
`,
    );
    const { child, done } = startCli(ws, ['--plan', file]);
    await waitForOutput(child, ': published');
    monitoring.value = 99;
    const r = await done;
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stdout).toContain('critical level: probe "db-cpu" (Prometheus): 99 > 95 (critical)');
    expect(published('prom-2')).toBeLessThan(10);
    monitoring.value = 10;
    const resumed = await runCli(ws, ['--resume', '--run-id', 'prom-2']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(published('prom-2')).toBe(10);
  });

  it('an HTTP JSON probe that cannot be measured throttles (not a silent pass); measured and under its level, the run goes on', async () => {
    monitoring.lag = 'error';
    const file = plan(
      'lag-http-1',
      '2026-05-20',
      '2026-05-26',
      `  check_interval_ms: 200
  settle_ms: 400
  probes:
    - { kind: http, name: kafka-lag, url: '${monitoring.url}/v3/kafka/local/consumer/orders/lag', path: status.totallag, max: 1000 }
`,
    );
    const { child, done } = startCli(ws, ['--plan', file, '--json']);
    await waitForOutput(child, '"type":"throttled"');
    await new Promise((res) => setTimeout(res, 800));
    expect(published('lag-http-1')).toBe(0); // nothing started while the lag could not be read
    monitoring.lag = 12;
    const r = await done;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(published('lag-http-1')).toBe(6);
    const events = jsonEvents(r.stdout);
    const { from } = throttleWindow(events);
    expect(events[from]?.reason).toMatch(
      /^probe "kafka-lag" \(HTTP\) cannot be measured \(HTTP 500 from http:\/\/127\.0\.0\.1:\d+\/v3\/kafka\/local\/consumer\/orders\/lag/,
    );
  });

  it('a probe that stays unmeasurable halts after --max-throttle-s, naming why', async () => {
    const file = plan(
      'lag-http-2',
      '2026-05-26',
      '2026-05-28',
      `  check_interval_ms: 200
  max_throttle_s: 1
  probes:
    - { kind: http, name: kafka-lag, url: 'http://127.0.0.1:${await freePort()}/nothing-listens-here', path: status.totallag, max: 1000 }
`,
    );
    const r = await runCli(ws, ['--plan', file]);
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stdout).toMatch(
      /throttled for \d+\.\d s, longer than max_throttle_s 1: probe "kafka-lag" \(HTTP\) cannot be measured \(http:\/\/127\.0\.0\.1:\d+\/nothing-listens-here: ECONNREFUSED\)/,
    );
    expect(published('lag-http-2')).toBe(0);
  });

  it('tune changes a level of a running run: a shorter --max-throttle-s halts a run that waits', async () => {
    monitoring.value = 99;
    const file = plan(
      'tune-throttle',
      '2026-05-28',
      '2026-05-31',
      `  check_interval_ms: 200
  probes:
    - { kind: prometheus, name: db-cpu, url: '${monitoring.url}', query: cpu, max: 80 }
`,
    );
    const { child, done } = startCli(ws, ['--plan', file, '--json']);
    await waitForOutput(child, '"type":"throttled"'); // and it would wait the default 30 minutes
    const tuned = await runCli(ws, ['tune', '--run-id', 'tune-throttle', '--max-throttle-s', '1']);
    expect(tuned.code, tuned.stderr).toBe(0);
    expect(tuned.stdout).toMatch(/Changed: stop\.max_throttle_s .* → 1/);
    const r = await done;
    monitoring.value = 10;
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(jsonEvents(r.stdout).find((e) => e.type === 'stopping')?.reason).toMatch(
      /^throttled for \d+\.\d s, longer than max_throttle_s 1: probe "db-cpu" \(Prometheus\): 99 > 80$/,
    );
    expect(published('tune-throttle')).toBe(0);
  });

  it('a run that waits keeps its lease: a second executor is refused while it is throttled', async () => {
    monitoring.value = 99;
    ws.env.BACKFILL_RUNBOOK_LEASE_MS = '900'; // expires within a second unless renewed
    try {
      const file = plan(
        'lease-throttle',
        '2026-05-31',
        '2026-06-01',
        `  check_interval_ms: 200
  probes:
    - { kind: prometheus, name: db-cpu, url: '${monitoring.url}', query: cpu, max: 80 }
`,
      );
      const { child, done } = startCli(ws, ['--plan', file]);
      await waitForOutput(child, 'Throttled:');
      await new Promise((res) => setTimeout(res, 2000)); // two lease lengths of waiting
      const second = await runCli(ws, ['--resume', '--run-id', 'lease-throttle']);
      expect(second.code, second.stdout + second.stderr).toBe(4);
      expect(second.stderr).toMatch(/run "lease-throttle" is being executed by another process/);
      monitoring.value = 10;
      const r = await done;
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(published('lease-throttle')).toBe(1);
    } finally {
      delete ws.env.BACKFILL_RUNBOOK_LEASE_MS;
      monitoring.value = 10;
    }
  });

  it('VACUUM running on the target table throttles the run until it is over', async () => {
    const vacuum: pg.Client = await adminClient(inject('pgA'), db.name);
    const file = plan(
      'vacuum-1',
      '2026-06-01',
      '2026-06-07',
      `  check_interval_ms: 200
  settle_ms: 400
  probes:
    - { kind: autovacuum }
`,
    );
    const { child, done } = startCli(ws, ['--plan', file, '--json']);
    await waitForOutput(child, '"type":"partition-published"');
    // A VACUUM slowed to a crawl (cost-based delay), as autovacuum on a big table would be.
    await db.client.query(`update mart.mart_order_daily set orders = orders where order_date < '2026-05-01'`); // dead tuples to clean
    await vacuum.query(`set vacuum_cost_delay = '100ms'`);
    await vacuum.query('set vacuum_cost_limit = 1');
    const pid = (await vacuum.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid;
    const running = vacuum.query('vacuum mart.mart_order_daily').catch((err: Error) => err.message);
    await waitForOutput(child, '"type":"throttled"');
    await new Promise((res) => setTimeout(res, 600));
    await db.client.query('select pg_cancel_backend($1)', [pid]);
    expect(await running).toMatch(/canceling statement/);
    const r = await done;
    await vacuum.end();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(published('vacuum-1')).toBe(6);
    const events = jsonEvents(r.stdout);
    const { from, to, during } = throttleWindow(events);
    expect(events[from]?.reason).toBe('VACUUMs running on mart.mart_order_daily: 1 > 0');
    expect(events[to]?.outcome).toBe('resumed');
    expect(during.filter((e) => e.type === 'partition-started')).toEqual([]);
  });
});

describe('pacing', () => {
  it('--duty-cycle 0.2 pauses after each partition four times as long as it took', async () => {
    const r = await runCli(ws, [
      'orders',
      '--from',
      '2026-06-20',
      '--to',
      '2026-06-25',
      '--run-id',
      'duty-1',
      '--duty-cycle',
      '0.2',
      '--json',
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const events = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { type: string; ms?: number });
    const partitions = events.filter((e) => e.type === 'partition-published').map((e) => e.ms ?? 0);
    const run = events.find((e) => e.type === 'run-finished')?.ms ?? 0;
    expect(partitions).toHaveLength(5);
    // a lower bound only: the pause after each partition but the last is at least 4 × its duration
    const paused = partitions.slice(0, -1).reduce((n, ms) => n + 4 * ms, 0);
    expect(run).toBeGreaterThanOrEqual(paused + partitions.reduce((n, ms) => n + ms, 0));
    const sqlite = new Database(ws.db, { readonly: true });
    const settings = sqlite.prepare(`select settings_json as s from runs where run_id = 'duty-1'`).get() as { s: string };
    sqlite.close();
    expect(JSON.parse(settings.s)).toMatchObject({ duty_cycle: 0.2 });
  });
});

describe('probe configuration', () => {
  it('probe SQL is user SQL: a probe that writes is refused before anything runs (exit 2), naming its field', async () => {
    const file = plan(
      'sql-probe-1',
      '2026-06-10',
      '2026-06-12',
      `  probes:
    - { name: sneaky, sql: 'delete from orders returning 1', max: 1 }
`,
    );
    const before = (await db.client.query<{ n: string }>('select count(*)::text as n from orders')).rows[0]?.n;
    const r = await runCli(ws, ['--plan', file]);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toContain('stop.probes[0].sql');
    expect((await db.client.query<{ n: string }>('select count(*)::text as n from orders')).rows[0]?.n).toBe(before);
    const status = await runCli(ws, ['status', '--run-id', 'sql-probe-1']);
    expect(status.code).toBe(2); // no run was recorded
  });

  it('a SQL probe measures through a read-only transaction and throttles on its value', async () => {
    const file = plan(
      'sql-probe-2',
      '2026-06-12',
      '2026-06-14',
      `  check_interval_ms: 200
  max_throttle_s: 1
  probes:
    - { name: backlog, sql: 'select count(*) from orders', max: 1 }
`,
    );
    const r = await runCli(ws, ['--plan', file]);
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stdout).toMatch(/longer than max_throttle_s 1: probe "backlog": \d+ > 1/);
  });

  it('a probe token whose environment variable is not set is a configuration error (exit 2), nothing recorded', async () => {
    const file = plan(
      'token-1',
      '2026-06-14',
      '2026-06-16',
      `  probes:
    - { kind: prometheus, name: db-cpu, url: '${monitoring.url}', query: cpu, max: 80, bearer_token_env: NOT_SET_ANYWHERE }
`,
    );
    const r = await runCli(ws, ['--plan', file]);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toContain('stop.probes[0].bearer_token_env: the environment variable NOT_SET_ANYWHERE is not set');
    expect((await runCli(ws, ['status', '--run-id', 'token-1'])).code).toBe(2);
  });
});
