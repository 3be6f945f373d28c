import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { InputError } from '../../shared/errors.ts';
import { requireColumns, resolveTable, type TableInfo } from '../../electron/engine/targets/postgres/catalog.ts';
import {
  copyFrom,
  copyTo,
  openPg,
  PgConnectError,
  query,
  type PgClient,
  type PgConnectOptions,
} from '../../electron/engine/targets/postgres/connect.ts';
import { classifyPgError, describePgError, isLockTimeout } from '../../electron/engine/targets/postgres/errors.ts';
import { quoteIdent, quoteQualified } from '../../electron/engine/targets/postgres/sql.ts';
import { createOrderMart, createOrderTables, orderedPartitionMd5, seedOrders, type SeedSummary } from '../support/dataset.ts';
import { freePort } from '../../electron/engine/sandbox/embeddedPostgres.ts';
import { adminClient, createTestDatabase, type TestDatabase } from '../support/pg.ts';

const pgA = inject('pgA');
const pgB = inject('pgB');

let db: TestDatabase;
let seeded: SeedSummary;
const opened: PgClient[] = [];

async function open(extra: Partial<PgConnectOptions> = {}): Promise<PgClient> {
  const client = await openPg({
    url: db.url,
    password: db.password,
    statementTimeoutMs: 30_000,
    lockTimeoutMs: 5_000,
    connectTimeoutMs: 5_000,
    ...extra,
  });
  opened.push(client);
  return client;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: unknown) => err,
  );
}

async function orderCount(client: PgClient): Promise<number> {
  const r = await query<{ n: number }>(client, 'select count(*)::int as n from orders');
  return r.rows[0]?.n ?? -1;
}

beforeAll(async () => {
  db = await createTestDatabase(pgA, 'adapter');
  seeded = await seedOrders(db.client, { from: '2026-04-01', days: 10, ordersPerDay: 200, seed: 42 });
  await createOrderMart(db.client);
});

afterAll(async () => {
  await Promise.all(opened.map((c) => c.end().catch(() => undefined)));
  await db.drop();
});

describe('openPg', () => {
  it('sets the session timeouts and the application name', async () => {
    const client = await open({ statementTimeoutMs: 30_000, lockTimeoutMs: 1_500 });
    const r = await query(
      client,
      `select current_setting('statement_timeout') as st, current_setting('lock_timeout') as lt,
              current_setting('idle_in_transaction_session_timeout') as idle, current_setting('application_name') as app`,
    );
    expect(r.rows).toEqual([{ st: '30s', lt: '1500ms', idle: '10min', app: 'backfill-runbook' }]);
    const named = await open({ applicationName: 'backfill-runbook bf-42' });
    expect((await query(named, `select current_setting('application_name') as app`)).rows).toEqual([{ app: 'backfill-runbook bf-42' }]);
  });

  it('says "connection refused" for a dead port, and never shows the password', async () => {
    const port = await freePort();
    const err = await failure(
      openPg({
        url: `postgres://postgres@127.0.0.1:${port}/postgres`,
        password: 'hunter2-secret',
        statementTimeoutMs: 1000,
        lockTimeoutMs: 1000,
        connectTimeoutMs: 2000,
      }),
    );
    expect(err).toBeInstanceOf(PgConnectError);
    const e = err as PgConnectError;
    expect(e.message).toBe(
      `cannot connect to PostgreSQL at 127.0.0.1:${port}/postgres: connection refused: is PostgreSQL running at 127.0.0.1:${port}?`,
    );
    expect(e.target).toBe(`127.0.0.1:${port}/postgres`);
    expect(classifyPgError(e)).toBe('transient');
  });

  const refused: [string, () => { url: string; password?: string }, (port: number, name: string) => string, 'transient' | 'permanent'][] = [
    [
      'a wrong password',
      () => ({ url: db.url, password: 'not-the-password' }),
      (port, name) =>
        `cannot connect to PostgreSQL at 127.0.0.1:${port}/${name}: password authentication failed for user "postgres": set the password_env variable (or the saved password) to this user's password`,
      'permanent',
    ],
    [
      'no password at all',
      () => ({ url: db.url }),
      (port, name) =>
        `cannot connect to PostgreSQL at 127.0.0.1:${port}/${name}: the server asks for a password for user "postgres" but none was given: set the password_env variable`,
      'permanent',
    ],
    [
      'a database that does not exist',
      () => ({ url: pgA.urlNoPassword.replace(/\/postgres$/, '/no_such_db'), password: pgA.password }),
      (port) =>
        `cannot connect to PostgreSQL at 127.0.0.1:${port}/no_such_db: database "no_such_db" does not exist: check the database in the connection url`,
      'permanent',
    ],
  ];
  it.each(refused)('explains %s', async (_name, conn, message, errorClass) => {
    const { url, password } = conn();
    const err = await failure(openPg({ url, password, statementTimeoutMs: 1000, lockTimeoutMs: 1000, connectTimeoutMs: 5000 }));
    expect(err).toBeInstanceOf(PgConnectError);
    expect((err as Error).message).toBe(message(pgA.port, db.name));
    expect((err as Error).message).not.toContain(pgA.password);
    expect((err as Error).message).not.toContain('not-the-password');
    expect(classifyPgError(err)).toBe(errorClass);
  });

  it('refuses a url that is not postgres://, without echoing its password', async () => {
    const err = await failure(openPg({ url: 'mysql://u:pw-123@h/db', statementTimeoutMs: 1, lockTimeoutMs: 1, connectTimeoutMs: 1 }));
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toBe('url: "mysql://u:***@h/db" is not a postgres:// URL (postgres://user@host:5432/database)');
  });
});

describe('resolveTable', () => {
  it('resolves an unqualified name through the search_path, with columns and keys', async () => {
    expect(await resolveTable(db.client, 'orders', 'source.table')).toEqual({
      schema: 'public',
      name: 'orders',
      quoted: '"public"."orders"',
      kind: 'table',
      columns: [
        { name: 'order_id', type: 'bigint', notNull: true, numeric: true },
        { name: 'customer_id', type: 'integer', notNull: false, numeric: true },
        { name: 'paid_at', type: 'timestamp with time zone', notNull: true, numeric: false },
        { name: 'paid_amount', type: 'numeric(12,2)', notNull: true, numeric: true },
        { name: 'status', type: 'text', notNull: true, numeric: false },
      ],
      uniqueKeys: [['order_id']],
    } satisfies TableInfo);
  });

  it('folds unquoted names like PostgreSQL and accepts the database part', async () => {
    const expected = await resolveTable(db.client, 'mart.mart_order_daily', 'target.table');
    expect(expected.uniqueKeys).toEqual([['order_date', 'customer_id']]);
    expect(expected.columns.map((c) => `${c.name} ${c.type}`)).toEqual([
      'order_date date',
      'customer_id integer',
      'orders bigint',
      'paid_amount numeric(14,2)',
    ]);
    expect(await resolveTable(db.client, 'MART.Mart_Order_Daily', 'target.table')).toEqual(expected);
    expect(await resolveTable(db.client, `"${db.name}".mart."mart_order_daily"`, 'target.table')).toEqual(expected);
  });

  it('resolves a hostile name in a hostile schema and round-trips data, leaving orders alone', async () => {
    const schema = 'odd."schema';
    const name = 'we"ird; drop table orders; --';
    const quoted = quoteQualified([schema, name]);
    await db.client.query(`create schema ${quoteQualified([schema])}`);
    await db.client.query(`create table ${quoted} (id int primary key, "Note" text, code text, other text,
      constraint code_unique unique (code) include (other),
      constraint other_deferred unique (other) deferrable initially deferred)`);
    await db.client.query(`create unique index partial_not_a_key on ${quoted} (code) where code is not null`);
    await db.client.query(`create unique index expression_not_a_key on ${quoted} (lower(other))`);

    const table = await resolveTable(db.client, quoted, 'target.table');
    expect(table).toEqual({
      schema,
      name,
      quoted: '"odd.""schema"."we""ird; drop table orders; --"',
      kind: 'table',
      columns: [
        { name: 'id', type: 'integer', notNull: true, numeric: true },
        { name: 'Note', type: 'text', notNull: false, numeric: false },
        { name: 'code', type: 'text', notNull: false, numeric: false },
        { name: 'other', type: 'text', notNull: false, numeric: false },
      ],
      uniqueKeys: [['id'], ['code']],
    } satisfies TableInfo);

    const [id, note] = requireColumns(table, ['id', 'Note'], 'target.key');
    await query(
      db.client,
      `insert into ${table.quoted} (${quoteIdent(id?.name ?? '')}, ${quoteIdent(note?.name ?? '')}) values (:id, :note)`,
      { id: 1, note: "'); drop table orders; --" },
    );
    expect((await query(db.client, `select * from ${table.quoted}`)).rows).toEqual([
      { id: 1, Note: "'); drop table orders; --", code: null, other: null },
    ]);
    expect(await orderCount(db.client)).toBe(seeded.orders);
  });

  const notFound: [string, string, (dbName: string) => string][] = [
    [
      'a misspelt qualified name',
      'mart.mart_order_dayly',
      (d) =>
        `target.table: table "mart.mart_order_dayly" was not found in database "${d}"; similar: mart.mart_order_daily; check the name or create the table first`,
    ],
    [
      'a misspelt bare name',
      'order',
      (d) =>
        `target.table: table "order" was not found in database "${d}" (searched schemas: public); similar: public.orders; check the name or create the table first`,
    ],
    [
      'a name with nothing like it',
      'zzz.qqq',
      (d) => `target.table: table "zzz.qqq" was not found in database "${d}"; check the name or create the table first`,
    ],
    ['an index', 'orders_paid_at', () => 'target.table: "orders_paid_at" is an index, not a table or view'],
    [
      'another database',
      'elsewhere.public.orders',
      (d) =>
        `target.table: "elsewhere.public.orders" names database "elsewhere", but this connection is to "${d}"; drop the database part or use a connection to that database`,
    ],
    [
      'SQL pretending to be a name',
      'orders; drop table orders --',
      () =>
        'target.table: "orders; drop table orders --" is not a valid table name: unexpected "; drop table orders --" after "orders"; write it as schema.table (or just table); quote parts holding other characters, e.g. "My Schema"."My Table"',
    ],
  ];
  it.each(notFound)('names the field and value for %s', async (_case, text, message) => {
    const err = await failure(resolveTable(db.client, text, 'target.table'));
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).message).toBe(message(db.name));
    expect((err as InputError).details).toMatchObject({ field: 'target.table', value: text });
    expect(await orderCount(db.client)).toBe(seeded.orders);
  });

  it('requireColumns lists the table columns when one is unknown', async () => {
    const table = await resolveTable(db.client, 'mart.mart_order_daily', 'target.table');
    expect(requireColumns(table, ['customer_id', 'order_date'], 'target.key').map((c) => c.name)).toEqual(['customer_id', 'order_date']);
    const cases: [string[], string][] = [
      [
        ['order_day'],
        'target.key[0]: column "order_day" is not in mart.mart_order_daily; its columns are: order_date, customer_id, orders, paid_amount',
      ],
      [
        ['order_date', 'Customer_ID'],
        'target.key[1]: column "Customer_ID" is not in mart.mart_order_daily (did you mean "customer_id"? names are case-sensitive); its columns are: order_date, customer_id, orders, paid_amount',
      ],
      [['order_date', 'order_date'], 'target.key[1]: column "order_date" is listed twice'],
    ];
    for (const [names, message] of cases) {
      const err = await failure(Promise.resolve().then(() => requireColumns(table, names, 'target.key')));
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).message).toBe(message);
    }
  });
});

describe('query with :name parameters', () => {
  it('round-trips tricky values and skips look-alikes in literals and comments', async () => {
    const values = { q: `it's "quoted"`, b: 'back\\slash \\n\\', u: '한글 é 🎉', n: null, d: '$1 :q -- /* $$', e: '' };
    const r = await query(
      db.client,
      `select :q::text as q, :b::text as b, :u::text as u, :n::text as n, :d::text as d, :e::text as e,
              ':q' as lit, E'\\\\:q\\'' as esc, $$ :q $$ as dollar, "q"."q" as ident, :q::text = :q::text as same
         from (select 1 as "q") as "q" -- :nope
        /* :nope /* :nested */ */`,
      values,
    );
    expect(r.rows).toEqual([{ ...values, lit: ':q', esc: "\\:q'", dollar: ' :q ', ident: 1, same: true }]);
    expect(r.fields.map((f) => f.name)).toEqual(['q', 'b', 'u', 'n', 'd', 'e', 'lit', 'esc', 'dollar', 'ident', 'same']);
  });

  it('binds partition bounds into a real range query', async () => {
    const r = await query<{ n: number }>(
      db.client,
      'select count(*)::int as n from orders where paid_at >= :partition_start and paid_at < :partition_end',
      {
        partition_start: '2026-04-01',
        partition_end: '2026-04-02',
        run_id: 'unused',
      },
    );
    expect(r.rows).toEqual([{ n: 200 }]);
  });
});

describe('timeouts and their classification', () => {
  it('lock_timeout fires while another session holds ACCESS EXCLUSIVE: transient, a lock timeout', async () => {
    const holder = await adminClient(pgA, db.name);
    try {
      await holder.query('begin');
      await holder.query('lock table orders in access exclusive mode');
      const ours = await open({ lockTimeoutMs: 200 });
      const err = await failure(query(ours, 'select count(*) from orders'));
      expect((err as { code?: string }).code).toBe('55P03'); // lock_timeout, not statement_timeout
      expect(classifyPgError(err)).toBe('transient');
      expect(isLockTimeout(err)).toBe(true);
      expect(describePgError(err)).toBe('SQLSTATE 55P03: canceling statement due to lock timeout');
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
  });

  it('statement_timeout cancels a slow statement: permanent, not a lock timeout', async () => {
    const ours = await open({ statementTimeoutMs: 150 });
    const err = await failure(query(ours, 'select pg_sleep(5)'));
    expect((err as { code?: string }).code).toBe('57014');
    expect(classifyPgError(err)).toBe('permanent');
    expect(isLockTimeout(err)).toBe(false);
    expect(describePgError(err)).toBe('SQLSTATE 57014: canceling statement due to statement timeout');
    expect(await orderCount(ours)).toBe(seeded.orders); // the session is still usable
  });
});

describe('the dataset', () => {
  it('is deterministic and plausible', async () => {
    const other = await createTestDatabase(pgA, 'dataset');
    try {
      const again = await seedOrders(other.client, { from: '2026-04-01', days: 10, ordersPerDay: 200, seed: 42 });
      expect(again).toEqual(seeded);
      expect(await orderedPartitionMd5(other.client, 'orders', 'paid_at', '2026-04-01', '2026-04-11')).toBe(
        await orderedPartitionMd5(db.client, 'orders', 'paid_at', '2026-04-01', '2026-04-11'),
      );
      const r = await query(
        db.client,
        `select min(customer_id) >= 1 and max(customer_id) <= 5000 as customers_in_range,
                min(paid_amount) >= 1 and max(paid_amount) <= 500 as amounts_in_range,
                min(paid_at) >= '2026-04-01' and max(paid_at) < '2026-04-11' as paid_in_range,
                (select bool_and(r.refunded_at > o.paid_at and r.refund_amount <= o.paid_amount) from refunds r join orders o using (order_id)) as refunds_after_payment,
                (select count(distinct order_id) = count(*) from refunds) as one_refund_per_order,
                count(*) filter (where status <> 'paid') = (select count(*) from refunds) as statuses_match_refunds
           from orders`,
      );
      expect(r.rows).toEqual([
        {
          customers_in_range: true,
          amounts_in_range: true,
          paid_in_range: true,
          refunds_after_payment: true,
          one_refund_per_order: true,
          statuses_match_refunds: true,
        },
      ]);
      expect(seeded.orders).toBe(2000);
      expect(seeded.refunds / seeded.orders).toBeGreaterThan(0.06);
      expect(seeded.refunds / seeded.orders).toBeLessThan(0.1);
    } finally {
      await other.drop();
    }
  });

  it('loads 120 days × 200 orders', async () => {
    const big = await createTestDatabase(pgA, 'dataset_big');
    try {
      const started = Date.now();
      const summary = await seedOrders(big.client, { from: '2026-04-01', days: 120, ordersPerDay: 200, seed: 42 });
      // A figure, not a target: speed targets live in `npm run bench`.
      console.info(`dataset: 24,000 orders loaded in ${Date.now() - started} ms`);
      expect(summary).toMatchObject({ orders: 24_000, from: '2026-04-01', to: '2026-07-30' });
      const counted = await big.client.query<{ n: string }>('select count(*)::text as n from orders');
      expect(counted.rows[0]?.n).toBe('24000');
    } finally {
      await big.drop();
    }
  });
});

describe('COPY between two servers', () => {
  const formats: [string, string][] = [
    ['text', ''],
    ['binary', ' (format binary)'],
  ];
  it.each(formats)('moves 10k rows exactly (%s format)', async (_format, options) => {
    const source = await createTestDatabase(pgA, 'copy_src');
    const target = await createTestDatabase(pgB, 'copy_dst');
    try {
      const summary = await seedOrders(source.client, { from: '2026-05-01', days: 50, ordersPerDay: 200, seed: 7 });
      expect(summary.orders).toBe(10_000);
      await createOrderTables(target.client);
      const from = await openPg({
        url: source.url,
        password: source.password,
        statementTimeoutMs: 60_000,
        lockTimeoutMs: 5_000,
        connectTimeoutMs: 5_000,
      });
      const to = await openPg({
        url: target.url,
        password: target.password,
        statementTimeoutMs: 60_000,
        lockTimeoutMs: 5_000,
        connectTimeoutMs: 5_000,
      });
      opened.push(from, to);
      const reader = copyTo(
        from,
        `copy (select * from orders where paid_at >= '2026-05-01' and paid_at < '2026-06-20') to stdout${options}`,
      );
      const writer = copyFrom(to, `copy orders from stdin${options}`);
      await pipeline(reader, writer);
      expect(reader.rowCount).toBe(10_000);
      expect(writer.rowCount).toBe(10_000);
      const md5 = await orderedPartitionMd5(source.client, 'public.orders', 'paid_at', '2026-05-01', '2026-06-20');
      expect(await orderedPartitionMd5(target.client, 'public.orders', 'paid_at', '2026-05-01', '2026-06-20')).toBe(md5);
      expect(md5).not.toBe('d41d8cd98f00b204e9800998ecf8427e'); // not the md5 of nothing
      expect(await orderCount(target.client)).toBe(10_000);
    } finally {
      await source.drop();
      await target.drop();
    }
  });
});
