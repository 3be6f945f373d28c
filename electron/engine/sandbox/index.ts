/**
 * The sandbox workspace: an embedded PostgreSQL with training data and an S3 API server (the
 * lake), their connection config, job files and its own ledger, all under one folder. Used by
 * the app when nothing is configured and by `run-backfill sandbox up`. Clearly labelled
 * "Sandbox" wherever it shows.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import type { Config } from '../../../shared/schemas.ts';
import { processAlive } from '../executor/processAlive.ts';
import { loadConfig } from '../plan/load.ts';
import { openPg, query } from '../targets/postgres/connect.ts';
import { openBucket } from '../targets/s3/open.ts';
import { freePort, startEmbeddedPostgres, type PgServerInfo } from './embeddedPostgres.ts';
import { SANDBOX_JOBS, sandboxConfig } from './jobs.ts';
import { startS3Server, type NodeSpawner, type S3ServerInfo } from './s3Server.ts';
import { BILLING_SQL, seedWarehouse } from './seed.ts';
import { startFailure } from './startFailure.ts';

export interface SandboxWorkspace {
  dir: string;
  configFile: string;
  jobsDir: string;
  dbFile: string;
  config: Config;
  label: 'Sandbox';
  pg: PgServerInfo;
  s3: S3ServerInfo;
  /** the pid of the process whose servers these are, when another process started them */
  attachedTo?: number;
  stop(): Promise<void>;
}

export interface SandboxOptions {
  dir: string;
  onLog?: (line: string) => void;
  /** how the S3 server's Node process is started (the desktop app passes its own) */
  spawnNode?: NodeSpawner;
}

interface SandboxState {
  port: number;
  s3Port?: number;
}

export const SANDBOX_DATABASE = 'sandbox';

export async function startSandbox(opts: SandboxOptions): Promise<SandboxWorkspace> {
  const { dir } = opts;
  mkdirSync(dir, { recursive: true });
  const stateFile = join(dir, 'sandbox.json');
  const previous = readState(stateFile);
  // One sandbox folder, one set of servers: when the app or `sandbox up` already runs them,
  // use those (their owner stops them) rather than fail on PostgreSQL's lock file.
  const owner = sandboxInUse(dir);
  if (owner !== undefined) return attach(dir, owner, previous);
  // The same ports as last time when they are free, so configs and notes stay valid.
  const port = previous && (await portIsFree(previous.port)) ? previous.port : await freePort();
  const s3Port = previous?.s3Port && (await portIsFree(previous.s3Port)) ? previous.s3Port : undefined;
  // Both servers start at once: the cold start is the slower of the two, not their sum.
  const [pgStarted, s3Started] = await Promise.allSettled([
    startEmbeddedPostgres({
      name: 'sandbox',
      dir: postgresDataDir(dir),
      password: 'sandbox',
      port,
      persistent: true,
      auth: 'trust',
      onLog: opts.onLog,
    }),
    startS3Server({ directory: join(dir, 's3'), port: s3Port, onLog: opts.onLog, spawn: opts.spawnNode }),
  ]);
  if (pgStarted.status === 'rejected' || s3Started.status === 'rejected') {
    await Promise.allSettled([
      pgStarted.status === 'fulfilled' ? pgStarted.value.stop() : undefined,
      s3Started.status === 'fulfilled' ? s3Started.value.stop() : undefined,
    ]);
    throw pgStarted.status === 'rejected' ? pgStarted.reason : (s3Started as PromiseRejectedResult).reason;
  }
  const pg = pgStarted.value;
  const s3 = s3Started.value;
  const stop = async (): Promise<void> => {
    await Promise.all([pg.stop(), s3.stop()]);
  };
  try {
    writeFileSync(stateFile, `${JSON.stringify({ port: pg.info.port, s3Port: s3.info.port } satisfies SandboxState)}\n`);
    const jobsDir = join(dir, 'jobs');
    mkdirSync(jobsDir, { recursive: true });
    for (const [name, text] of Object.entries(SANDBOX_JOBS)) {
      const file = join(jobsDir, `${name}.yaml`);
      if (!existsSync(file)) writeFileSync(file, text);
    }
    const configFile = join(dir, 'backfill.config.yaml');
    writeFileSync(configFile, sandboxConfig(pg.info.port, s3.info.endpoint));
    const config = loadConfig(configFile);
    await Promise.all([ensureDatabase(pg.info), ensureBucket(config)]);
    return { dir, configFile, jobsDir, dbFile: join(dir, 'runbook.sqlite'), config, label: 'Sandbox', pg: pg.info, s3: s3.info, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The pid of the live PostgreSQL serving this sandbox's data (the app's or `sandbox up`'s), if any. */
export function sandboxInUse(dir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(join(postgresDataDir(dir), 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
  // Alive also when it is another user's (PostgreSQL runs as 'postgres' when we are root).
  return processAlive(pid) ? pid : undefined;
}

function attach(dir: string, owner: number, state: SandboxState | undefined): SandboxWorkspace {
  const configFile = join(dir, 'backfill.config.yaml');
  if (!state?.s3Port || !existsSync(configFile)) {
    throw startFailure(
      `the sandbox in ${dir} is in use by another process (its PostgreSQL has pid ${owner}) that did not leave its connection config: stop that process (quit the app, or run-backfill sandbox down), then start again`,
    );
  }
  const config = loadConfig(configFile);
  const info: PgServerInfo = {
    host: '127.0.0.1',
    port: state.port,
    user: 'postgres',
    password: 'sandbox',
    urlNoPassword: `postgres://postgres@127.0.0.1:${state.port}/postgres`,
  };
  const s3: S3ServerInfo = { endpoint: `http://127.0.0.1:${state.s3Port}`, port: state.s3Port, directory: join(dir, 's3') };
  return {
    dir,
    configFile,
    jobsDir: join(dir, 'jobs'),
    dbFile: join(dir, 'runbook.sqlite'),
    config,
    label: 'Sandbox',
    pg: info,
    s3,
    attachedTo: owner,
    stop: () => Promise.resolve(),
  };
}

/** The lake's bucket, made the first time. */
async function ensureBucket(config: Config): Promise<void> {
  const lake = openBucket(config, 'lake', 'connections.lake', process.env);
  try {
    await lake.ensureBucket();
  } finally {
    lake.client.destroy();
  }
}

/**
 * Creates and seeds the training database the first time; leaves it alone afterwards. The seed
 * runs in one transaction, so a database without the marts is a seed that was interrupted:
 * it is dropped and made again.
 */
async function ensureDatabase(info: PgServerInfo): Promise<void> {
  const base = {
    statementTimeoutMs: 120_000,
    lockTimeoutMs: 10_000,
    connectTimeoutMs: 10_000,
    applicationName: 'backfill-runbook-sandbox',
  };
  const sandboxUrl = info.urlNoPassword.replace(/\/postgres$/, `/${SANDBOX_DATABASE}`);
  const admin = await openPg({ ...base, url: info.urlNoPassword });
  try {
    const exists = await query(admin, 'SELECT 1 FROM pg_database WHERE datname = :name', { name: SANDBOX_DATABASE });
    if (exists.rows.length > 0) {
      const probe = await openPg({ ...base, url: sandboxUrl });
      try {
        const seeded = await query<{ t: string | null }>(probe, `SELECT to_regclass('mart.refund_daily')::text AS t`, {});
        if (seeded.rows[0]?.t) {
          await probe.query(BILLING_SQL); // seeded before billing.invoiced_days existed: the config's probe reads it
          return;
        }
      } finally {
        await probe.end();
      }
      await admin.query(`DROP DATABASE ${SANDBOX_DATABASE} WITH (FORCE)`);
    }
    await admin.query(`CREATE DATABASE ${SANDBOX_DATABASE}`);
  } finally {
    await admin.end();
  }
  const client = await openPg({ ...base, url: sandboxUrl });
  try {
    await seedWarehouse(client);
  } finally {
    await client.end();
  }
}

/**
 * Where the sandbox's PostgreSQL keeps its data: inside the sandbox folder — except as root,
 * where PostgreSQL runs as the 'postgres' user and cannot enter root's private home; then it
 * lives in /var/tmp (kept across reboots), named after the sandbox folder.
 */
export function postgresDataDir(dir: string): string {
  if (process.getuid?.() !== 0) return join(dir, 'postgres');
  const id = createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 12);
  return join('/var/tmp', `backfill-runbook-sandbox-${id}`, 'postgres');
}

/** Deletes a stopped sandbox: its folder and its PostgreSQL data wherever that lives. */
export function removeSandbox(dir: string): void {
  rmSync(dirname(postgresDataDir(dir)) === resolve(dir) ? resolve(dir) : dirname(postgresDataDir(dir)), { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}

function readState(file: string): SandboxState | undefined {
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as Partial<SandboxState>;
    return typeof state.port === 'number'
      ? { port: state.port, ...(typeof state.s3Port === 'number' ? { s3Port: state.s3Port } : {}) }
      : undefined;
  } catch {
    return undefined;
  }
}

async function portIsFree(port: number): Promise<boolean> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
