/**
 * (i) the throttle's reactions, on the real executor writing empty partitions to PostgreSQL,
 * watching one Prometheus probe served here: from the signal crossing its level to the
 * executor's pause (the `throttled` event: no partition starts after it), and from its recovery
 * to the next partition starting — each printed against the check interval, which bounds them:
 * the pause within one interval (plus a measurement), the restart within the settle time
 * (3 intervals by default, counted from the last reading over the level: 2 to 3 intervals after
 * the signal recovered). Crossings and recoveries fall at random points between measurements.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { configSchema, planSchema } from '../shared/schemas.ts';
import type { Runner } from '../electron/engine/executor/runner.ts';
import { StopConditions } from '../electron/engine/safety/stopConditions.ts';
import type { PgServerInfo } from '../electron/engine/sandbox/embeddedPostgres.ts';
import { benchJob, runExecutor } from './executor.ts';
import { median } from './pairs.ts';

type Line = (name: string, value: string, target: string, pass: boolean, detail: string) => void;

const TRIALS = Number(process.env.BENCH_THROTTLE_TRIALS ?? 5);
const INTERVALS = [200, 500, 1000];
const DATABASE = 'bench_throttle';
const FROM = '2020-01-01';
/** Far more empty partitions than a trial writes: the run never ends by itself. */
const TO = '2040-01-01';

const JOB = benchJob({
  name: 'bench-throttle',
  sourceQuery: 'select day, id from src_empty where day >= :partition_start and day < :partition_end',
  table: 'mart.empty_target',
  partitionColumn: 'day',
  key: ['day', 'id'],
});

async function prepare(server: PgServerInfo): Promise<void> {
  const connect = async (database: string) => {
    const c = new pg.Client({ host: server.host, port: server.port, user: server.user, password: server.password, database });
    await c.connect();
    return c;
  };
  const admin = await connect('postgres');
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  await admin.end();
  const c = await connect(DATABASE);
  await c.query('CREATE SCHEMA mart');
  await c.query('CREATE TABLE src_empty (day date NOT NULL, id bigint NOT NULL, PRIMARY KEY (day, id))');
  await c.query('CREATE TABLE mart.empty_target (day date NOT NULL, id bigint NOT NULL, PRIMARY KEY (day, id))');
  await c.end();
}

/** A Prometheus instant-query API answering with `value`. */
async function fakePrometheus(): Promise<{ url: string; set(v: number): void; close(): Promise<void> }> {
  let value = 0;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        status: 'success',
        data: { resultType: 'vector', result: [{ metric: {}, value: [Date.now() / 1000, String(value)] }] },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    set: (v) => (value = v),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface Trial {
  pauseMs: number;
  restartMs: number;
}

async function trial(server: PgServerInfo, intervalMs: number): Promise<Trial> {
  const [job, from, to] = [JOB, FROM, TO];
  const prom = await fakePrometheus();
  const plan = planSchema.parse({
    request_id: 'bench-throttle',
    job: job.name,
    range: { from, to },
    write_mode: 'overwrite-partition',
    stop: { check_interval_ms: intervalMs, probes: [{ kind: 'prometheus', name: 'signal', url: prom.url, query: 'signal', max: 50 }] },
  });
  const config = configSchema.parse({
    connections: {
      dst: { kind: 'postgres', url: server.urlNoPassword.replace(/\/postgres$/, `/${DATABASE}`), password_env: 'BENCH_PG_PASSWORD' },
    },
  });
  const monitor = new StopConditions({
    plan,
    config,
    targetConnection: 'dst',
    applicationName: 'bench',
    timeZone: 'UTC',
    expectedRows: new Map(),
    env: { BENCH_PG_PASSWORD: server.password },
  });
  let runner: Runner | undefined;
  let published = 0;
  const marks: { crossed?: number; throttled?: number; recovered?: number; restarted?: number } = {};
  let steady: () => void = () => undefined;
  const steadyNow = new Promise<void>((resolve) => (steady = resolve));
  let throttled: () => void = () => undefined;
  const throttledNow = new Promise<void>((resolve) => (throttled = resolve));
  let restarted: () => void = () => undefined;
  const restartedNow = new Promise<void>((resolve) => (restarted = resolve));
  const run = runExecutor({
    job,
    from,
    to,
    source: { server, database: DATABASE },
    target: { server, database: DATABASE },
    monitor,
    onRunner: (r) => (runner = r),
    onEvent: (e) => {
      const t = performance.now();
      if (e.type === 'partition-published' && ++published === 20) steady();
      if (e.type === 'throttled' && marks.crossed !== undefined && marks.throttled === undefined) {
        marks.throttled = t;
        throttled();
      }
      if (e.type === 'partition-started' && marks.recovered !== undefined && marks.restarted === undefined) {
        marks.restarted = t;
        restarted();
      }
    },
  });
  await steadyNow;
  // At a random point between two measurements, as a real signal would cross: not in step with them.
  await new Promise((resolve) => setTimeout(resolve, Math.random() * intervalMs));
  marks.crossed = performance.now();
  prom.set(100);
  await throttledNow;
  await new Promise((resolve) => setTimeout(resolve, intervalMs * (2 + Math.random())));
  marks.recovered = performance.now();
  prom.set(0);
  await restartedNow;
  runner?.requestStop('the measurement is done');
  await run;
  await prom.close();
  return { pauseMs: (marks.throttled ?? 0) - marks.crossed, restartMs: (marks.restarted ?? 0) - marks.recovered };
}

export async function runThrottleBench(line: Line, server: PgServerInfo): Promise<void> {
  await prepare(server);
  for (const intervalMs of INTERVALS) {
    const trials: Trial[] = [];
    for (let i = 0; i < TRIALS; i++) trials.push(await trial(server, intervalMs));
    const pause = trials.map((t) => t.pauseMs / intervalMs);
    const restart = trials.map((t) => t.restartMs / intervalMs);
    const spread = (v: number[]) => `${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)}`;
    const ms = (v: number[]) => `${median(v.map((x) => x * intervalMs)).toFixed(0)} ms`;
    line(
      `(i) throttle: crossing → pause, ${intervalMs} ms interval`,
      `${median(pause).toFixed(2)}×`,
      '≤ 1.5×',
      Math.max(...pause) <= 1.5,
      `median ${ms(pause)}; range ${spread(pause)} × the interval over ${TRIALS} trials (a measurement takes part of one)`,
    );
    line(
      `(i) throttle: recovery → next partition, ${intervalMs} ms`,
      `${median(restart).toFixed(2)}×`,
      '≤ 3.5×',
      Math.max(...restart) <= 3.5,
      `median ${ms(restart)}; range ${spread(restart)} × the interval over ${TRIALS} trials (settle: 3 intervals after the last reading over the level)`,
    );
  }
}
