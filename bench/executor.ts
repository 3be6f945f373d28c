/**
 * Runs the real executor (Runner + PostgresPartitionTarget + a SQLite ledger) in-process, the
 * way `run-backfill` does, minus process start-up — the benchmarks measure the engine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { partitionRange } from '../shared/partitions.ts';
import {
  asPostgresJob,
  connectionSchema,
  jobSchema,
  type Job,
  type PostgresConnection,
  type PostgresJob,
  type WriteMode,
} from '../shared/schemas.ts';
import { Runner } from '../electron/engine/executor/runner.ts';
import type { ExecutorEvent, RunOutcome } from '../electron/engine/executor/events.ts';
import type { StopMonitor } from '../electron/engine/safety/stopConditions.ts';
import { jobHash } from '../electron/engine/plan/hash.ts';
import { openStore } from '../electron/engine/store/index.ts';
import { PostgresPartitionTarget } from '../electron/engine/targets/postgres/partitionTarget.ts';
import type { PgServerInfo } from '../electron/engine/sandbox/embeddedPostgres.ts';
import { profiling, resetProfile, snapshotProfile, type Profile } from './profile.ts';

export function pgConnection(server: PgServerInfo, database: string): PostgresConnection {
  const parsed = connectionSchema.parse({
    kind: 'postgres',
    url: server.urlNoPassword.replace(/\/postgres$/, `/${database}`),
    password_env: 'BENCH_PG_PASSWORD',
  });
  if (parsed.kind !== 'postgres') throw new Error('unreachable');
  return parsed;
}

export function benchJob(fields: {
  name: string;
  sourceQuery: string;
  table: string;
  partitionColumn: string;
  key: string[];
  validation?: Job['validation'];
}): PostgresJob {
  return asPostgresJob(
    jobSchema.parse({
      name: fields.name,
      unit: 'day',
      timezone: 'UTC',
      source: { connection: 'src', query: fields.sourceQuery },
      target: { connection: 'dst', table: fields.table, partition_column: fields.partitionColumn, key: fields.key },
      write_mode: 'overwrite-partition',
      validation: fields.validation ?? [],
    }),
  );
}

let runCounter = 0;

export async function runExecutor(opts: {
  job: PostgresJob;
  from: string;
  to: string;
  source: { server: PgServerInfo; database: string };
  target: { server: PgServerInfo; database: string };
  mode?: WriteMode;
  /** Read each written partition back for its measures and checksum (see PostgresTargetOptions). */
  scanTarget?: boolean;
  /** stop conditions and throttle signals ((i) measures the throttle's reactions) */
  monitor?: StopMonitor;
  onEvent?: (event: ExecutorEvent) => void;
  /** the runner, to stop it when the measurement is done */
  onRunner?: (runner: Runner) => void;
}): Promise<RunOutcome & { writeMs: number; profile: Profile | undefined }> {
  const ledgerDir = mkdtempSync(join(tmpdir(), 'bfr-bench-'));
  const store = openStore(join(ledgerDir, 'ledger.sqlite'));
  const partitions = partitionRange({ from: opts.from, to: opts.to }, opts.job.unit, opts.job.timezone);
  const runId = `bench-${process.pid}-${++runCounter}`;
  const mode = opts.mode ?? opts.job.write_mode;
  const hash = jobHash(opts.job);
  store.plans.save({ planHash: runId, requestId: runId, jobName: opts.job.name, plan: { bench: runId } });
  store.runs.create({
    runId,
    jobName: opts.job.name,
    planHash: runId,
    jobHash: hash,
    kind: 'execute',
    rangeFrom: opts.from,
    rangeTo: opts.to,
    unit: opts.job.unit,
    timezone: opts.job.timezone,
    writeMode: mode,
    tier: 'semi-auto',
    requestedBy: 'bench',
    executedBy: 'bench',
    settings: { sleepMs: 0, concurrency: 1 },
    partitions,
    actor: 'bench',
  });
  const sameServer = opts.source.server.port === opts.target.server.port && opts.source.database === opts.target.database;
  const target = new PostgresPartitionTarget({
    job: opts.job,
    writeMode: mode,
    source: {
      name: sameServer ? 'dst' : 'src',
      connection: pgConnection(opts.source.server, opts.source.database),
      password: opts.source.server.password,
    },
    target: { name: 'dst', connection: pgConnection(opts.target.server, opts.target.database), password: opts.target.server.password },
    scanTarget: opts.scanTarget,
  });
  try {
    // The write phase (first partition started → last published) apart from the final
    // reconciliation, which re-reads source and target and is reported on its own.
    let firstStart = 0;
    let lastPublished = 0;
    let profile: Profile | undefined;
    const runner = new Runner({
      store,
      runId,
      target,
      actor: 'bench',
      monitor: opts.monitor,
      onEvent: (e) => {
        opts.onEvent?.(e);
        if (e.type === 'partition-started' && firstStart === 0) {
          firstStart = performance.now();
          resetProfile();
        }
        if (e.type === 'partition-published') {
          lastPublished = performance.now();
          if (profiling()) profile = snapshotProfile();
        }
      },
    });
    opts.onRunner?.(runner);
    const outcome = await runner.run();
    return { ...outcome, writeMs: lastPublished - firstStart, profile };
  } finally {
    store.close();
    rmSync(ledgerDir, { recursive: true, force: true });
  }
}
