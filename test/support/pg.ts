// Per-test databases on the servers started by globalSetup.ts, so test files never share tables.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { quoteIdent } from '../../electron/engine/targets/postgres/sql.ts';
import type { PgServerInfo } from './globalSetup.ts';

export type { PgServerInfo } from './globalSetup.ts';

export interface TestDatabase {
  name: string;
  /** postgres://postgres@127.0.0.1:PORT/NAME — no password, as users write it. */
  url: string;
  password: string;
  /** Connected to the new database, session time zone UTC. */
  client: pg.Client;
  /** Closes `client`, ends any other session on the database and drops it. */
  drop(): Promise<void>;
}

/** A connected superuser client on the server's `postgres` database; end it when done. */
export async function adminClient(server: PgServerInfo, database = 'postgres'): Promise<pg.Client> {
  const client = new pg.Client({ host: server.host, port: server.port, user: server.user, password: server.password, database });
  client.on('error', () => undefined); // a server stopping under an idle client must not crash the run
  await client.connect();
  return client;
}

let counter = 0;

export async function createTestDatabase(server: PgServerInfo, prefix: string): Promise<TestDatabase> {
  const tag = `${prefix
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 30)}_${process.pid}_${++counter}_${randomBytes(3).toString('hex')}`;
  const name = tag.slice(0, 63);
  const admin = await adminClient(server);
  try {
    await admin.query(`CREATE DATABASE ${quoteIdent(name)} ENCODING 'UTF8' TEMPLATE template0`);
    // Row text (the md5 oracle) renders timestamptz in the session zone: pin it.
    await admin.query(`ALTER DATABASE ${quoteIdent(name)} SET timezone TO 'UTC'`);
  } finally {
    await admin.end();
  }
  const client = await adminClient(server, name);
  let dropped = false;
  return {
    name,
    url: `postgres://${server.user}@${server.host}:${server.port}/${name}`,
    password: server.password,
    client,
    async drop() {
      if (dropped) return;
      dropped = true;
      await client.end().catch(() => undefined);
      const again = await adminClient(server);
      try {
        await again.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
      } finally {
        await again.end();
      }
    },
  };
}
