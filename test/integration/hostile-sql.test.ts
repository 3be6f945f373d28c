/**
 * "A dry run cannot write", tried the way a hostile or careless job author would (issue 13).
 * For every SQL field a job can hold, each payload below is tried through every command that
 * takes the job to a server — dry run, check, prove, snapshot, run — and through the app's
 * calls, against a real PostgreSQL. After each: a canary table's md5, the target's md5, the
 * server's large objects, a file a COPY TO PROGRAM would have made, an idle session
 * pg_terminate_backend would have ended, the marker schema a dry run must not create, and no
 * session of ours left open.
 *
 * Every payload is refused before it reaches the server (the parse guard). The second half
 * proves the two server-side guards hold alone, with the parse guard bypassed: the extended
 * protocol runs one statement, and a READ ONLY transaction or savepoint refuses every write.
 */
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CallResult } from '../../shared/contract.ts';
import { registerHandlers, type IpcEventLike, type IpcMainLike } from '../../electron/main/handlers/index.ts';
import { openPg, query } from '../../electron/engine/targets/postgres/connect.ts';
import { readOnlySavepoint, readOnlyTransaction, userQuery } from '../../electron/engine/targets/postgres/userQuery.ts';
import { createOrderMart, orderedPartitionMd5, seedOrders } from '../support/dataset.ts';
import { adminClient, createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, orderMartJob, pgConfig, runCli, type Workspace } from '../support/workspace.ts';
import { appService } from '../support/app.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;
let watcher: pg.Client;
let dblink = false;
const PWNED = join(tmpdir(), `bfr-hostile-${randomBytes(4).toString('hex')}`);
const RANGE = ['--from', '2026-05-01', '--to', '2026-05-03'];

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'hostile');
  await seedOrders(db.client, { from: '2026-05-01', days: 3, ordersPerDay: 20, seed: 13 });
  await createOrderMart(db.client);
  await db.client.query(`insert into mart.mart_order_daily values ('2026-05-01', 1, 1, 9.99), ('2026-05-02', 2, 3, 1.50)`);
  await db.client.query(`create table canary (id int primary key, v text not null)`);
  await db.client.query(`insert into canary select g, md5(g::text) from generate_series(1, 100) g`);
  // A function of the server's that writes: VOLATILE, as PostgreSQL requires of a writer.
  await db.client.query(`create function bf_write_canary() returns int language sql volatile as $$ delete from canary returning 1 $$`);
  const available = await db.client.query(`select count(*)::int as n from pg_available_extensions where name = 'dblink'`);
  dblink = (available.rows[0] as { n: number }).n > 0;
  if (dblink) await db.client.query('create extension dblink');
  watcher = await adminClient(inject('pgA'), db.name);
  ws = makeWorkspace('hostile', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
});

afterAll(async () => {
  await watcher?.end().catch(() => undefined);
  await db?.drop();
  rmSync(PWNED, { force: true });
});

interface Payload {
  name: string;
  sql: () => string;
}

const PAYLOADS: Payload[] = [
  { name: 'several statements, no parameters', sql: () => 'select 1 as rows limit 0; delete from canary; select * from (select 1) s' },
  {
    name: 'several statements, with parameters',
    sql: () => 'select count(*) as rows from orders where paid_at >= :partition_start; delete from canary',
  },
  { name: 'a COMMIT breakout', sql: () => 'commit; delete from canary; select 0 as rows' },
  { name: 'a ROLLBACK breakout', sql: () => 'rollback; delete from canary; select 0 as rows' },
  { name: 'a data-modifying CTE', sql: () => 'with d as (delete from canary returning 1) select count(*) as rows from d' },
  { name: 'SELECT … INTO', sql: () => 'select * into canary_copy from canary' },
  { name: 'lo_import', sql: () => `select lo_import('/etc/hostname') as rows` },
  {
    name: 'pg_terminate_backend',
    sql: () => `select pg_terminate_backend(${(watcher as pg.Client & { processID: number }).processID}) as rows`,
  },
  { name: 'set_config of a session setting', sql: () => `select set_config('default_transaction_read_only', 'off', false) as rows` },
  { name: 'an advisory lock that outlives the transaction', sql: () => 'select pg_advisory_lock(42) as rows' },
  { name: 'SQL given as text (query_to_xml)', sql: () => `select query_to_xml('delete from canary returning 1', true, false, '') as rows` },
  { name: 'COPY … TO PROGRAM', sql: () => `copy (select 1) to program 'touch ${PWNED}'` },
  { name: 'dblink_exec (another connection)', sql: () => `select dblink_exec('dbname=${db.name}', 'delete from canary') as rows` },
];

const FIELDS = ['source.query', 'validation[0].source', 'validation[0].target', 'quality[0].sql'] as const;
type Field = (typeof FIELDS)[number];

/** The example job (docs/design.md §4) with one field replaced by `sql`. */
function hostileJob(name: string, field: Field, sql: string): string {
  const quoted = JSON.stringify(sql);
  const base = orderMartJob({
    name,
    billing: false,
    extra: `quality:\n  - { kind: custom_sql, name: canary, sql: ${field === 'quality[0].sql' ? quoted : JSON.stringify('select count(*) from orders')}, min: 0, severity: fail }\n`,
  });
  const replaced = {
    'source.query': () => base.replace(/ {2}query: \|\n(?: {4}.*\n)+/, `  query: ${quoted}\n`),
    'validation[0].source': () => base.replace(/ {4}source: select count\(\*\) as rows.*\n\s+where .*\n/, `    source: ${quoted}\n`),
    'validation[0].target': () => base.replace(/ {4}target: select coalesce.*\n\s+where .*\n/, `    target: ${quoted}\n`),
    'quality[0].sql': () => base,
  }[field]();
  // A pattern that stopped matching would leave the job harmless and every case green.
  if (!replaced.includes(quoted)) throw new Error(`the hostile ${field} was not put into the job`);
  return replaced;
}

interface Observed {
  canary: string;
  target: string;
  largeObjects: number;
  markerSchema: boolean;
  watcherAlive: boolean;
  ourSessions: number;
  advisoryLocks: number;
}

async function observe(): Promise<Observed> {
  const c = db.client;
  const canary = (await c.query(`select md5(string_agg(id || ':' || v, ',' order by id)) as m from canary`)).rows[0] as { m: string };
  const lo = (await c.query('select count(*)::int as n from pg_largeobject_metadata')).rows[0] as { n: number };
  const schema = (await c.query(`select count(*)::int as n from pg_namespace where nspname = 'backfill_runbook'`)).rows[0] as { n: number };
  const sessions = (
    await c.query(`select count(*)::int as n from pg_stat_activity where datname = $1 and application_name like 'backfill-runbook%'`, [
      db.name,
    ])
  ).rows[0] as { n: number };
  const locks = (await c.query(`select count(*)::int as n from pg_locks where locktype = 'advisory'`)).rows[0] as { n: number };
  const alive = await watcher.query('select 1').then(
    () => true,
    () => false,
  );
  return {
    canary: canary.m,
    target: await orderedPartitionMd5(c, 'mart.mart_order_daily', 'order_date', '2026-01-01', '2027-01-01'),
    largeObjects: lo.n,
    markerSchema: schema.n > 0,
    watcherAlive: alive,
    ourSessions: sessions.n,
    advisoryLocks: locks.n,
  };
}

/** Sessions end a moment after the client process exits: wait (up to 10 s) for the server to see it. */
async function settled(): Promise<Observed> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const o = await observe();
    if (o.ourSessions === 0) return o;
    if (Date.now() > deadline) {
      const left = await db.client.query(
        `select application_name, state, query from pg_stat_activity where datname = $1 and application_name like 'backfill-runbook%'`,
        [db.name],
      );
      console.log(`sessions of ours still open after 10 s: ${JSON.stringify(left.rows)}`);
      return o;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `p`, or a failure naming `what` once it has taken a minute: a hang says where it hung. */
function within<T>(what: string, p: Promise<T>, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

let before: Observed;

function expectUntouched(after: Observed): void {
  expect(after).toEqual({ ...before, ourSessions: 0 });
  expect(existsSync(PWNED)).toBe(false);
}

describe.each(FIELDS)('a hostile %s', (field) => {
  beforeAll(async () => {
    before = await settled();
    expect(before.watcherAlive).toBe(true);
  });

  it.each(PAYLOADS)('$name: refused by every command (exit 2, naming the field); nothing written', async (payload) => {
    if (payload.name.startsWith('dblink') && !dblink) {
      console.log(`dblink is not installed on this server: ${payload.name} tried as plain text only`);
    }
    const job = `h-${FIELDS.indexOf(field)}-${PAYLOADS.indexOf(payload)}`;
    ws.writeJob(job, hostileJob(job, field, payload.sql()));
    const commands: [string, string[]][] = [
      ['dry run', [job, ...RANGE, '--dry-run']],
      ['check', ['check', job, ...RANGE]],
      ['prove', ['prove', job, '--partition', '2026-05-01']],
      ['snapshot', ['snapshot', job, ...RANGE, '--run-id', `snap-${job}`]],
      ['run', [job, ...RANGE, '--run-id', `run-${job}`]],
    ];
    for (const [what, args] of commands) {
      const r = await runCli(ws, args, 45_000);
      expect(r.stderr, `${what}: ${r.stderr}`).toContain(`job "${job}": ${field}: `);
      expect(r.stderr, what).not.toMatch(/\n\s+at /); // no stack trace
      expect(r.code, `${what}: ${r.stderr}`).toBe(2);
      expectUntouched(await settled());
    }
    // The app, through its real handlers.
    const service = appService(ws, { WAREHOUSE_PASSWORD: db.password });
    const handlers = new Map<string, (event: IpcEventLike, ...args: unknown[]) => unknown>();
    const ipc: IpcMainLike = { handle: (c, l) => void handlers.set(c, l), removeHandler: (c) => void handlers.delete(c) };
    registerHandlers(ipc, { trust: () => true, redact: (t) => service.redact(t) }, service);
    const event: IpcEventLike = { senderFrame: { url: 'app://runbook/' }, sender: { id: 1 } };
    const call = (name: string, input: unknown) =>
      within(`the app's ${name}`, handlers.get(name)?.(event, input) as Promise<CallResult<unknown>>);
    try {
      const runId = `app-${job}`;
      const plan = { request_id: runId, job, range: { from: '2026-05-01', to: '2026-05-03' }, write_mode: 'overwrite-partition' };
      expect(await call('plans:create', { plan })).toMatchObject({ ok: true });
      const sanity = await call('runbook:sanity', { runId });
      expect(sanity).toMatchObject({ ok: false, error: { code: 'input' } });
      if (!sanity.ok) expect(sanity.error.message).toContain(`${field}: `);
      for (const step of ['runbook:snapshot', 'runbook:dryRun', 'run:start'])
        expect(await call(step, { runId }), step).toMatchObject({ ok: false });
    } finally {
      await within("the app's close", service.close());
    }
    expectUntouched(await settled());
  });
});

describe("a hostile stop probe (a plan file's stop.probes[0].sql)", () => {
  beforeAll(async () => {
    ws.writeJob('probe-host', orderMartJob({ name: 'probe-host', billing: false }));
    before = await settled();
  });

  it.each(PAYLOADS)('$name: the run is refused before anything runs (exit 2, naming the field); nothing written', async (payload) => {
    const runId = `probe-${PAYLOADS.indexOf(payload)}`;
    const file = ws.writeFile(
      `${runId}.plan.yaml`,
      `request_id: ${runId}\njob: probe-host\nrange: { from: '2026-05-01', to: '2026-05-03' }\nwrite_mode: overwrite-partition\nstop:\n  probes:\n    - { name: hostile, max: 1, sql: ${JSON.stringify(payload.sql())} }\n`,
    );
    const r = await runCli(ws, ['--plan', file]);
    expect(r.stderr, r.stdout + r.stderr).toContain('stop.probes[0].sql');
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expectUntouched(await settled());
  });
});

describe('a function of the server that writes (declared VOLATILE, as PostgreSQL requires of a writer)', () => {
  // The parse guard cannot know what a function of the server does: each command that runs the
  // field asks the server, refuses it (exit 2, naming the function), and writes nothing.
  // 0 = the command does not run that field. Snapshot runs no job SQL at all.
  const expected: Record<Field, Record<string, number>> = {
    'source.query': { 'dry run': 2, check: 0, prove: 2, run: 2 },
    'validation[0].source': { 'dry run': 2, check: 0, prove: 2, run: 2 },
    'validation[0].target': { 'dry run': 2, check: 0, prove: 2, run: 2 },
    'quality[0].sql': { 'dry run': 0, check: 2, prove: 0, run: 2 },
  };
  it.each(FIELDS)('in %s', async (field) => {
    const job = `volatile-${FIELDS.indexOf(field)}`;
    ws.writeJob(job, hostileJob(job, field, 'select bf_write_canary() as rows'));
    before = await settled();
    const commands: [string, string[]][] = [
      ['dry run', [job, ...RANGE, '--dry-run']],
      ['check', ['check', job, ...RANGE]],
      ['prove', ['prove', job, '--partition', '2026-05-01']],
      ['run', [job, ...RANGE, '--run-id', `run-${job}`]],
    ];
    for (const [what, args] of commands) {
      const r = await runCli(ws, args);
      expect(r.code, `${what}: ${r.stderr}`).toBe(expected[field][what]);
      if (r.code === 2) expect(r.stderr, what).toContain(`${field}: the SQL calls public.bf_write_canary, declared VOLATILE on the server`);
      const after = await settled();
      expect(after.canary, what).toBe(before.canary);
      expect(after.target, what).toBe(before.target);
      expect(after.ourSessions, what).toBe(0);
    }
  });
});

describe('the server-side guards hold alone (the parse guard bypassed)', () => {
  async function session(): Promise<Awaited<ReturnType<typeof openPg>>> {
    return openPg({ url: db.url, password: db.password, statementTimeoutMs: 10_000, lockTimeoutMs: 2_000, connectTimeoutMs: 5_000 });
  }

  it('query() sends one statement: several in one text are a syntax error, with or without parameters', async () => {
    before = await settled();
    const c = await session();
    try {
      await expect(query(c, 'select 1; delete from canary')).rejects.toMatchObject({ code: '42601' });
      await expect(query(c, 'select :a::int; delete from canary', { a: 1 })).rejects.toMatchObject({ code: '42601' });
      await expect(query(c, 'commit; delete from canary')).rejects.toMatchObject({ code: '42601' });
    } finally {
      await c.end();
    }
    expectUntouched(await settled());
  });

  it('a READ ONLY transaction refuses a write, even by a function of the server', async () => {
    const c = await session();
    try {
      await expect(readOnlyTransaction(c, (s) => query(s, 'delete from canary'))).rejects.toMatchObject({ code: '25006' });
      await expect(readOnlyTransaction(c, (s) => query(s, 'select bf_write_canary()'))).rejects.toMatchObject({ code: '25006' });
      await expect(readOnlyTransaction(c, (s) => query(s, `select lo_import('/etc/hostname')`))).rejects.toMatchObject({ code: '25006' });
      expect(c.getTransactionStatus()).toBe('I'); // rolled back, the session reusable
    } finally {
      await c.end();
    }
    expectUntouched(await settled());
  });

  it('a READ ONLY savepoint inside the write: the rule sees the uncommitted rows, cannot write, and the write goes on', async () => {
    const c = await session();
    try {
      await c.query('BEGIN');
      await query(c, `insert into canary values (1000, 'written by the backfill')`);
      // What the rule sees, and that nothing it tries can change anything:
      const seen = await readOnlySavepoint(c, (s) => query<{ n: string }>(s, 'select count(*)::text as n from canary'));
      expect(seen.rows[0]?.n).toBe('101');
      await expect(readOnlySavepoint(c, (s) => query(s, 'delete from canary'))).rejects.toMatchObject({ code: '25006' });
      // The failed read rolled back to its savepoint: the transaction is usable, still read-write.
      expect((await query<{ transaction_read_only: string }>(c, 'show transaction_read_only')).rows[0]?.transaction_read_only).toBe('off');
      // A session setting changed inside the savepoint is undone with it.
      // (work_mem: a statement_timeout of 1 ms would cut short the ROLLBACK TO SAVEPOINT itself on
      // a busy machine — which fails safe, the whole write rolls back — and test nothing here.)
      const workMem = (await query<{ work_mem: string }>(c, 'show work_mem')).rows[0]?.work_mem;
      await readOnlySavepoint(c, (s) => query(s, `select set_config('work_mem', '64kB', false)`));
      expect((await query<{ work_mem: string }>(c, 'show work_mem')).rows[0]?.work_mem).toBe(workMem);
      expect(workMem).not.toBe('64kB');
      await query(c, `insert into canary values (1001, 'also written')`);
      await c.query('COMMIT');
      const n = await query<{ n: string }>(c, 'select count(*)::text as n from canary where id >= 1000');
      expect(n.rows[0]?.n).toBe('2');
    } finally {
      await c.query('delete from canary where id >= 1000').catch(() => undefined);
      await c.end();
    }
    expectUntouched(await settled());
  });

  it('userQuery refuses before sending, and names the field', async () => {
    const c = await session();
    try {
      await expect(
        readOnlyTransaction(c, (s) =>
          userQuery(s, 'with d as (delete from canary returning 1) select 1', {}, { field: 'x.sql', where: 'job "j"' }),
        ),
      ).rejects.toThrow('job "j": x.sql: the SQL holds a DELETE (a data-modifying WITH): it would write');
      await expect(
        readOnlyTransaction(c, (s) => userQuery(s, 'select no_such_column from canary', {}, { field: 'x.sql' })),
      ).rejects.toThrow(/x\.sql: the server refused the SQL: SQLSTATE 42703: column "no_such_column" does not exist/);
    } finally {
      await c.end();
    }
  });
});
