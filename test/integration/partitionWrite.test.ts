/**
 * One partition's write (docs/design.md §6) with the source side of the validation rules read beside
 * the write — on a second connection in the write's exported snapshot (pushdown), or in the
 * COPY's own source transaction (cross-server): a mismatch still rolls back, the source side
 * sees exactly the data that was written, stop-now cancels every connection, none is left open.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { asPostgresJob, connectionSchema, jobSchema, type Job, type PostgresConnection } from '../../shared/schemas.ts';
import { AbortedError, PartitionBusyError, PartitionValidationError } from '../../electron/engine/executor/errors.ts';
import type { PartitionWriteResult, WriteContext } from '../../electron/engine/executor/types.ts';
import { binaryCopyFits } from '../../electron/engine/targets/postgres/copySource.ts';
import { PostgresPartitionTarget } from '../../electron/engine/targets/postgres/partitionTarget.ts';
import { adminClient, createTestDatabase, type TestDatabase } from '../support/pg.ts';

const pgA = inject('pgA');
const pgB = inject('pgB');

const DDL = `(day date NOT NULL, id int NOT NULL, amount numeric(12,2) NOT NULL, t text, PRIMARY KEY (day, id))`;
const DAY = { key: '2026-01-02', start: '2026-01-02', end: '2026-01-03' };
const RULE = {
  name: 'rows and amount',
  source: 'select count(*) as rows, sum(amount) as amount from src where day >= :partition_start and day < :partition_end',
  target: 'select count(*) as rows, sum(amount) as amount from tgt where day >= :partition_start and day < :partition_end',
  tolerance: 0,
};
const SOURCE_QUERY = 'select day, id, amount, t from src where day >= :partition_start and day < :partition_end';

let srcDb: TestDatabase; // source, and target of the pushdown cases
let dstDb: TestDatabase; // target of the COPY cases (another server)

beforeAll(async () => {
  [srcDb, dstDb] = await Promise.all([createTestDatabase(pgA, 'pwrite_src'), createTestDatabase(pgB, 'pwrite_dst')]);
  for (const db of [srcDb, dstDb]) await db.client.query(`CREATE TABLE tgt ${DDL}`);
});

afterAll(async () => {
  await Promise.all([srcDb.drop(), dstDb.drop()]);
});

/** Source: 3 rows on 2026-01-02 (amount 10, 20, 30), 1 row the day after. Targets: old rows. */
async function reset(): Promise<void> {
  await srcDb.client.query(`DROP TABLE IF EXISTS src; CREATE TABLE src ${DDL}`);
  await srcDb.client.query(
    `INSERT INTO src VALUES ('2026-01-02', 1, 10, 'a'), ('2026-01-02', 2, 20, 'b'), ('2026-01-02', 3, 30, 'c'), ('2026-01-03', 4, 40, 'd')`,
  );
  for (const db of [srcDb, dstDb]) {
    await db.client.query(`DROP TABLE IF EXISTS backfill_runbook.partition_marks; TRUNCATE tgt`);
    await db.client.query(`INSERT INTO tgt VALUES ('2026-01-02', 9, 99, 'old')`);
  }
}

function connection(db: TestDatabase): PostgresConnection {
  const parsed = connectionSchema.parse({ kind: 'postgres', url: db.url, password_env: 'UNUSED' });
  if (parsed.kind !== 'postgres') throw new Error('unreachable');
  return parsed;
}

let jobs = 0;

function target(opts: { across?: boolean; rule?: Partial<Job['validation'][number]>; sourceQuery?: string }): {
  target: PostgresPartitionTarget;
  app: string;
} {
  const name = `pwrite-${++jobs}`;
  const dst = opts.across ? dstDb : srcDb;
  const job = asPostgresJob(
    jobSchema.parse({
      name,
      unit: 'day',
      timezone: 'UTC',
      source: { connection: 'src', query: opts.sourceQuery ?? SOURCE_QUERY },
      target: { connection: opts.across ? 'dst' : 'src', table: 'tgt', partition_column: 'day', key: ['day', 'id'] },
      write_mode: 'overwrite-partition',
      validation: [{ ...RULE, ...opts.rule }],
    }),
  );
  const endpoint = (n: string, db: TestDatabase) => ({ name: n, connection: connection(db), password: db.password });
  const t = new PostgresPartitionTarget({
    job,
    writeMode: 'overwrite-partition',
    source: endpoint('src', srcDb),
    target: opts.across ? endpoint('dst', dst) : endpoint('src', srcDb),
  });
  return { target: t, app: `backfill-runbook:${name}` };
}

function context(signal = new AbortController().signal): WriteContext & { validated: PartitionWriteResult[] } {
  const validated: PartitionWriteResult[] = [];
  return {
    runId: 'run-1',
    planHash: 'plan-1',
    attempt: 1,
    writeMode: 'overwrite-partition',
    signal,
    validated,
    onValidated: (r) => void validated.push(r),
  };
}

async function targetRows(db: TestDatabase): Promise<string[]> {
  const r = await db.client.query<{ row: string }>(`SELECT concat_ws('|', day::text, id, amount, t) AS row FROM tgt ORDER BY day, id`);
  return r.rows.map((x) => x.row);
}

async function marks(db: TestDatabase): Promise<number> {
  const r = await db.client.query<{ n: number }>(`SELECT count(*)::int AS n FROM backfill_runbook.partition_marks`);
  return r.rows[0]?.n ?? -1;
}

/** Sessions of the job still connected to either server. */
async function sessionsLeft(app: string): Promise<number> {
  let n = 0;
  for (const server of [pgA, pgB]) {
    const admin = await adminClient(server);
    try {
      n +=
        (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1`, [app])).rows[0]
          ?.n ?? 0;
    } finally {
      await admin.end();
    }
  }
  return n;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: unknown) => err,
  );
}

const OLD = ['2026-01-02|9|99.00|old'];
const NEW = ['2026-01-02|1|10.00|a', '2026-01-02|2|20.00|b', '2026-01-02|3|30.00|c'];

describe.each([
  ['pushdown (same database)', false],
  ['COPY (across servers)', true],
])('%s', (_name, across) => {
  const db = (): TestDatabase => (across ? dstDb : srcDb);

  it('publishes rows, checks and marker when source and target agree', async () => {
    await reset();
    const { target: t, app } = target({ across });
    await t.prepare();
    const ctx = context();
    const result = await t.writePartition(DAY, ctx);
    await t.close();
    expect(result.checks).toEqual([
      {
        rule: 'rows and amount',
        source: { rows: '3', amount: '60.00' },
        target: { rows: '3', amount: '60.00' },
        diffRatio: 0,
        tolerance: 0,
        ok: true,
      },
    ]);
    expect([result.rowsWritten, result.targetCount, result.sourceCount, ctx.validated.length]).toEqual([3, 3, 3, 1]);
    expect(await targetRows(db())).toEqual(NEW);
    expect(await marks(db())).toBe(1);
    expect(await sessionsLeft(app)).toBe(0);
  });

  it('a mismatch found beside the write rolls back: old rows stay, no marker, no session left', async () => {
    await reset();
    const { target: t, app } = target({ across, rule: { target: RULE.target.replace('sum(amount)', 'sum(amount) + 1') } });
    await t.prepare();
    const ctx = context();
    const err = await failure(t.writePartition(DAY, ctx));
    await t.close();
    expect(err).toBeInstanceOf(PartitionValidationError);
    expect((err as Error).message).toBe(
      'partition 2026-01-02 did not validate, rolled back: rule "rows and amount": rows 3 vs 3, amount 60.00 vs 61.00 (diff 1.6667% > tolerance 0.0000%)',
    );
    expect(ctx.validated).toEqual([]);
    expect(await targetRows(db())).toEqual(OLD);
    expect(await marks(db())).toBe(0);
    expect(await sessionsLeft(app)).toBe(0);
  });

  it('stop-now cancels the write and the source side still reading: rolled back at once, no session left', async () => {
    await reset();
    const slowRule = { source: RULE.source.replace('from src', 'from src, pg_sleep(20) as pause') };
    const { target: t, app } = target({ across, rule: slowRule });
    await t.prepare();
    const stop = new AbortController();
    const started = Date.now();
    setTimeout(() => stop.abort(), 700);
    const err = await failure(t.writePartition(DAY, context(stop.signal)));
    const ms = Date.now() - started;
    await t.close();
    expect(err).toBeInstanceOf(AbortedError);
    expect(ms).toBeLessThan(5_000);
    expect(await targetRows(db())).toEqual(OLD);
    expect(await marks(db())).toBe(0);
    expect(await sessionsLeft(app)).toBe(0);
  });
});

describe('the source side reads the snapshot the write read', () => {
  it('a source row committed while the rows are written is in neither the rows nor the check', async () => {
    await reset();
    // The write's INSERT … SELECT pauses 1.5 s; meanwhile a new source row commits.
    const { target: t, app } = target({
      sourceQuery: `with pause as materialized (select pg_sleep(1.5)) ${SOURCE_QUERY.replace('from src', 'from src, pause')}`,
    });
    await t.prepare();
    const writing = t.writePartition(DAY, context());
    const late = await adminClient(pgA, srcDb.name);
    try {
      await expect
        .poll(
          async () =>
            (
              await late.query<{ n: number }>(
                `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'INSERT%' AND state = 'active'`,
                [app],
              )
            ).rows[0]?.n,
          { timeout: 5_000 },
        )
        .toBe(1);
      await late.query(`INSERT INTO src VALUES ('2026-01-02', 5, 50, 'late')`);
    } finally {
      await late.end();
    }
    const result = await writing;
    await t.close();
    // Read in a later snapshot (as before), the source side would count 4 rows and roll back.
    expect(result.checks.map((c) => [c.source, c.ok])).toEqual([[{ rows: '3', amount: '60.00' }, true]]);
    expect(await targetRows(srcDb)).toEqual(NEW);
  });
});

describe('the partition lock', () => {
  it('is refused while another session holds it, and free again once a write has ended', async () => {
    await reset();
    const { target: t } = target({});
    await t.prepare();
    const holder = await adminClient(pgA, srcDb.name);
    const key = `backfill_runbook:public.tgt:${DAY.key}`;
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [key]);
      const err = await failure(t.writePartition(DAY, context()));
      expect(err).toBeInstanceOf(PartitionBusyError);
      expect((err as Error).message).toBe('partition 2026-01-02 of public.tgt is being written by another run');
      await holder.query('COMMIT');
      await t.writePartition(DAY, context());
      // The executor drops its lock just after COMMIT, off the critical path.
      await expect
        .poll(
          async () =>
            (await holder.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok`, [key])).rows[0]?.ok,
          { timeout: 2_000 },
        )
        .toBe(true);
    } finally {
      await holder.end();
      await t.close();
    }
    expect(await targetRows(srcDb)).toEqual(NEW);
  });
});

describe('the partition checksum', () => {
  it('hashes the whole row even when a column is named "t" (the alias the checksum SQL uses)', async () => {
    await reset();
    const checksum = async (): Promise<string> => {
      const { target: t } = target({});
      await t.prepare();
      try {
        return (await t.writePartition(DAY, context())).checksum;
      } finally {
        await t.close();
      }
    };
    const first = await checksum();
    expect(first).toMatch(/^h64:[0-9a-f]{32}$/);
    expect(await checksum()).toBe(first);
    await srcDb.client.query(`UPDATE src SET amount = amount + 1 WHERE id = 2`); // column t unchanged
    expect(await checksum()).not.toBe(first);
  });
});

describe('binary COPY between servers, only where it means the same at both ends', () => {
  const cases: [string, string, boolean][] = [
    ['the same built-in types', 'select day, id, amount, t from src', true],
    ['int8 into an int4 column', 'select day, id::bigint as id, amount, t from src', false],
    ['float8 into a numeric column', 'select day, id, amount::float8 as amount, t from src', false],
    ['text into a date column', 'select day::text as day, id, amount, t from src', false],
  ];
  it.each(cases)('%s → binary %s', async (_name, sql, binary) => {
    await reset();
    const [source, dest] = [await adminClient(pgA, srcDb.name), await adminClient(pgB, dstDb.name)];
    try {
      const fields = (await source.query(`${sql} limit 0`)).fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID }));
      expect(await binaryCopyFits(source, dest, '"public"."tgt"', fields)).toBe(binary);
    } finally {
      await Promise.all([source.end(), dest.end()]);
    }
  });

  it('a source whose types differ is copied as text, exactly', async () => {
    await reset();
    const { target: t } = target({
      across: true,
      sourceQuery: `select day::text as day, id::bigint as id, amount::text as amount, t from src where day >= :partition_start and day < :partition_end`,
    });
    await t.prepare();
    await t.writePartition(DAY, context());
    await t.close();
    expect(await targetRows(dstDb)).toEqual(NEW);
  });
});
