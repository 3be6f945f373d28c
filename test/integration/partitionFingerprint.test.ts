/**
 * Where an overwrite pushed down into a table that stores the source's rows unchanged, the
 * partition's measures and checksum are computed from the rows read (beside the write, in its
 * snapshot) instead of reading the written partition back. They must be exactly what reading
 * it back gives — for every column type, NULLs, collations, a dropped column, columns in
 * another order — and any table that could change, add or hide a row must be read back.
 * reconcile() then proves every marker's checksum against the target as it stands.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { asPostgresJob, connectionSchema, jobSchema, type PostgresConnection, type WriteMode } from '../../shared/schemas.ts';
import { CommitOutcomeUnknownError, PartitionValidationError } from '../../electron/engine/executor/errors.ts';
import type { PartitionWriteResult, WriteContext } from '../../electron/engine/executor/types.ts';
import { PostgresPartitionTarget } from '../../electron/engine/targets/postgres/partitionTarget.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';

const pgA = inject('pgA');

const DAY = { key: '2026-03-29', start: '2026-03-29', end: '2026-03-30' };

/** Every kind of column a checksum could trip on; `gone` is dropped from the target below. */
const COLUMNS = `day date NOT NULL, id int NOT NULL, amount numeric(12,2), gone int, price float8, label text COLLATE "C",
  tag varchar(10), at timestamptz, doc jsonb, tags int[], m mood, ok boolean, u uuid, raw bytea, PRIMARY KEY (day, id)`;
const SOURCE_COLUMNS = COLUMNS.replace('gone int, ', '');
/** The source query names the columns in another order than the table has them. */
const SOURCE_QUERY = `select raw, u, ok, m, tags, doc, at, tag, label, price, amount, id, day
  from src where day >= :partition_start and day < :partition_end`;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase(pgA, 'fingerprint');
  await db.client.query(`CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')`);
  await db.client.query(`CREATE TABLE src (${SOURCE_COLUMNS})`);
  await db.client.query(`INSERT INTO src VALUES
    ('2026-03-29', 1, 10.50, 1.5, 'Zebra', 'short', '2026-03-29 01:30:00+00', '{"a": [1, 2, {"b": null}]}', '{1,2,3}', 'happy', true, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\xdeadbeef'),
    ('2026-03-29', 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    ('2026-03-29', 3, -0.01, -0.0, 'émoji 🎉 and ß', '', '2026-03-29 23:59:59.999999+00', '[]', '{}', 'sad', false, '00000000-0000-0000-0000-000000000000', '\\x'),
    ('2026-03-29', 4, 9999999999.99, 'NaN', 'apple', 'tenchars!!', '2026-03-29 12:00:00+09', '{"z": 1, "a": 2}', '{NULL,7}', 'ok', NULL, NULL, '\\x00'),
    ('2026-03-30', 5, 1, 1, 'next day', 'x', now(), '{}', '{5}', 'ok', true, NULL, NULL)`);
});

afterAll(async () => {
  await db.drop();
});

/** A fresh target `name` shaped like the source, with `gone` dropped in the middle, and its extras. */
async function makeTarget(name: string, extra: string[] = [], columns = COLUMNS): Promise<void> {
  await db.client.query(`DROP TABLE IF EXISTS ${name} CASCADE; CREATE TABLE ${name} (${columns})`);
  if (columns.includes('gone int')) await db.client.query(`ALTER TABLE ${name} DROP COLUMN gone`);
  await db.client.query(`INSERT INTO ${name} (day, id, label) VALUES ('2026-03-29', 99, 'old row')`);
  for (const sql of extra) await db.client.query(sql);
  await db.client.query(`DELETE FROM backfill_runbook.partition_marks WHERE target_table = $1`, [`public.${name}`]).catch(() => undefined);
}

function connection(): PostgresConnection {
  const parsed = connectionSchema.parse({ kind: 'postgres', url: db.url, password_env: 'UNUSED' });
  if (parsed.kind !== 'postgres') throw new Error('unreachable');
  return parsed;
}

let jobs = 0;

function partitionTarget(
  table: string,
  opts: { scanTarget?: boolean; mode?: WriteMode; key?: string[]; sourceQuery?: string } = {},
): PostgresPartitionTarget {
  const mode = opts.mode ?? 'overwrite-partition';
  const job = asPostgresJob(
    jobSchema.parse({
      name: `fingerprint-${++jobs}`,
      unit: 'day',
      timezone: 'UTC',
      source: { connection: 'wh', query: opts.sourceQuery ?? SOURCE_QUERY },
      target: { connection: 'wh', table, partition_column: 'day', key: opts.key ?? ['day', 'id'] },
      write_mode: mode,
      validation: [
        {
          name: 'rows',
          source: 'select count(*) as rows from src where day >= :partition_start and day < :partition_end',
          target: `select count(*) as rows from ${table} where day >= :partition_start and day < :partition_end`,
          tolerance: 0,
        },
      ],
    }),
  );
  const endpoint = { name: 'wh', connection: connection(), password: db.password };
  return new PostgresPartitionTarget({ job, writeMode: mode, source: endpoint, target: endpoint, scanTarget: opts.scanTarget });
}

function context(mode: WriteMode = 'overwrite-partition'): WriteContext {
  return {
    runId: 'run-fp',
    planHash: 'plan-fp',
    attempt: 1,
    writeMode: mode,
    signal: new AbortController().signal,
    onValidated: () => undefined,
  };
}

async function write(
  table: string,
  opts: Parameters<typeof partitionTarget>[1] = {},
): Promise<{ result: PartitionWriteResult; from: string; why: string }> {
  const t = partitionTarget(table, opts);
  try {
    await t.prepare();
    const result = await t.writePartition(DAY, context(opts.mode));
    return { result, from: t.fingerprintFrom, why: t.fingerprintWhy };
  } finally {
    await t.close();
  }
}

async function markChecksum(table: string): Promise<string | undefined> {
  const r = await db.client.query<{ checksum: string }>(
    `SELECT checksum FROM backfill_runbook.partition_marks WHERE target_table = $1 AND partition_key = $2`,
    [`public.${table}`, DAY.key],
  );
  return r.rows[0]?.checksum;
}

describe('the fingerprint computed from the source rows', () => {
  it('is used for a table that stores the rows as read, and equals reading the partition back', async () => {
    await makeTarget('tgt_plain');
    const fromSource = await write('tgt_plain');
    expect([fromSource.from, fromSource.why]).toEqual(['source rows', '']);
    expect(fromSource.result.checksum).toMatch(/^h64:[0-9a-f]{32}$/);
    expect(await markChecksum('tgt_plain')).toBe(fromSource.result.checksum);

    // The same write again, this time reading the written partition back: same rows, same values.
    const readBack = await write('tgt_plain', { scanTarget: true });
    expect([readBack.from, readBack.why]).toEqual(['target scan', 'asked to read the target back']);
    expect(readBack.result.checksum).toBe(fromSource.result.checksum);
    expect(readBack.result.targetCount).toBe(4);
    expect(fromSource.result.targetCount).toBe(4);
    expect(fromSource.result.targetSums).toEqual(readBack.result.targetSums);
    expect(fromSource.result.targetSums).toEqual({ rows: '4', amount: '10000000010.48', price: 'NaN' });
  });

  it('a partitioned table whose partition has its own column order and a dropped column: the same as reading it back', async () => {
    await db.client.query(`DROP TABLE IF EXISTS tgt_parted CASCADE; CREATE TABLE tgt_parted (${SOURCE_COLUMNS}) PARTITION BY RANGE (day)`);
    // A partition made apart, columns in another order and one dropped, then attached.
    await db.client
      .query(`DROP TABLE IF EXISTS tgt_parted_march; CREATE TABLE tgt_parted_march (raw bytea, junk int, u uuid, ok boolean, m mood, tags int[], doc jsonb,
      at timestamptz, tag varchar(10), label text COLLATE "C", price float8, amount numeric(12,2), id int NOT NULL, day date NOT NULL)`);
    await db.client.query(`ALTER TABLE tgt_parted_march DROP COLUMN junk`);
    await db.client.query(`ALTER TABLE tgt_parted ATTACH PARTITION tgt_parted_march FOR VALUES FROM ('2026-03-01') TO ('2026-04-01')`);
    const fromSource = await write('tgt_parted');
    expect(fromSource.from).toBe('source rows');
    const readBack = await write('tgt_parted', { scanTarget: true });
    expect(readBack.result.checksum).toBe(fromSource.result.checksum);
    expect(readBack.result.targetCount).toBe(4);
  });

  it('a different row gives a different checksum, and reconcile says the rows changed after publishing', async () => {
    await makeTarget('tgt_changed');
    const { result } = await write('tgt_changed');
    const t = partitionTarget('tgt_changed');
    try {
      await t.prepare();
      expect((await t.reconcile(DAY)).problems).toEqual([]);
      await db.client.query(`UPDATE tgt_changed SET label = 'Zebra!' WHERE id = 1`);
      const row = await t.reconcile(DAY);
      expect(row.ok).toBe(false);
      expect(row.problems).toHaveLength(1);
      expect(row.problems[0]).toMatch(
        new RegExp(
          `^the partition's checksum is h64:[0-9a-f]{32}, not the ${result.checksum} published by run-fp: its rows changed after they were published$`,
        ),
      );
    } finally {
      await t.close();
    }
  });

  it('a marker that cannot be written, sent with the COMMIT, rolls the partition back: nothing published, the lock free', async () => {
    await makeTarget('tgt_nomark');
    // The marker row for this one table is refused by the server, as a full disk or a revoked
    // grant would refuse it.
    await db.client.query(`CREATE OR REPLACE FUNCTION refuse_mark() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.target_table = 'public.tgt_nomark' THEN RAISE EXCEPTION 'marker refused'; END IF; RETURN NEW; END $$`);
    await db.client.query(
      `CREATE TRIGGER refuse_mark BEFORE INSERT OR UPDATE ON backfill_runbook.partition_marks FOR EACH ROW EXECUTE FUNCTION refuse_mark()`,
    );
    const t = partitionTarget('tgt_nomark');
    try {
      await t.prepare();
      expect(t.fingerprintFrom).toBe('source rows');
      let validated = false;
      const err = await t.writePartition(DAY, { ...context(), onValidated: () => void (validated = true) }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(validated).toBe(true); // the checks passed: it is the marker that failed
      // Settled by the runner from the target's marker: there is none, so it is the marker's failure.
      expect(err).toBeInstanceOf(CommitOutcomeUnknownError);
      expect(((err as Error).cause as Error).message).toBe('marker refused');
      const left = await db.client.query<{ id: number }>(`SELECT id FROM tgt_nomark ORDER BY id`);
      expect(left.rows.map((r) => r.id)).toEqual([99]);
      expect(await markChecksum('tgt_nomark')).toBeUndefined();
      const lock = await db.client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok`, [
        `backfill_runbook:public.tgt_nomark:${DAY.key}`,
      ]);
      expect(lock.rows[0]?.ok).toBe(true);
      await db.client.query(`SELECT pg_advisory_unlock_all()`);

      // Once the marker can be written, the same target (and its pooled sessions) publishes.
      await db.client.query(`DROP TRIGGER refuse_mark ON backfill_runbook.partition_marks`);
      const result = await t.writePartition(DAY, context());
      expect(result.targetCount).toBe(4);
      expect(await markChecksum('tgt_nomark')).toBe(result.checksum);
    } finally {
      await db.client.query(
        `DROP TRIGGER IF EXISTS refuse_mark ON backfill_runbook.partition_marks; DROP FUNCTION IF EXISTS refuse_mark()`,
      );
      await t.close();
    }
  });

  it('rows the source returns outside the partition fail validation; nothing is published', async () => {
    await makeTarget('tgt_outside');
    const t = partitionTarget('tgt_outside', {
      sourceQuery: SOURCE_QUERY.replace('and day < :partition_end', 'and day < (:partition_end)::date + 1'),
    });
    try {
      await t.prepare();
      expect(t.fingerprintFrom).toBe('source rows');
      const err = await t.writePartition(DAY, context()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(PartitionValidationError);
      expect((err as Error).message).toContain('wrote 5 rows but the partition holds 4');
    } finally {
      await t.close();
    }
    const left = await db.client.query<{ id: number }>(`SELECT id FROM tgt_outside ORDER BY id`);
    expect(left.rows.map((r) => r.id)).toEqual([99]);
    expect(await markChecksum('tgt_outside')).toBeUndefined();
  });
});

describe('a table that could change, add or hide a row is read back', () => {
  const cases: [string, string[], string | undefined, Parameters<typeof partitionTarget>[1], RegExp][] = [
    [
      'a trigger',
      [
        `CREATE OR REPLACE FUNCTION fp_upper() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.label := upper(NEW.label); RETURN NEW; END $$`,
        `CREATE TRIGGER up BEFORE INSERT ON tgt_case FOR EACH ROW EXECUTE FUNCTION fp_upper()`,
      ],
      undefined,
      {},
      /^public\.tgt_case has triggers$/,
    ],
    [
      'a rule',
      [`CREATE RULE no_delete AS ON DELETE TO tgt_case WHERE old.id < 0 DO INSTEAD NOTHING`],
      undefined,
      {},
      /^public\.tgt_case has rules$/,
    ],
    ['row-level security', [`ALTER TABLE tgt_case ENABLE ROW LEVEL SECURITY`], undefined, {}, /^public\.tgt_case has row-level security$/],
    [
      'a column the source does not give',
      [`ALTER TABLE tgt_case ADD COLUMN loaded_at timestamptz DEFAULT now()`],
      undefined,
      {},
      /^the source query does not give column loaded_at$/,
    ],
    [
      'a generated column',
      [`ALTER TABLE tgt_case ADD COLUMN cents bigint GENERATED ALWAYS AS ((amount * 100)::bigint) STORED`],
      undefined,
      {},
      /^column cents is generated$/,
    ],
    [
      'a wider numeric than the source gives',
      [],
      COLUMNS.replace('numeric(12,2)', 'numeric(14,2)'),
      {},
      /^the source gives column amount in another type than the table's$/,
    ],
    [
      'text where the source gives varchar',
      [],
      COLUMNS.replace('varchar(10)', 'text'),
      {},
      /^the source gives column tag in another type than the table's$/,
    ],
    ['an upsert', ['DELETE FROM tgt_case'], undefined, { mode: 'upsert' }, /^write mode upsert keeps rows the source did not give$/],
    [
      'a key no unique index enforces',
      [],
      COLUMNS.replace(', PRIMARY KEY (day, id)', ''),
      {},
      /^duplicate keys must be counted in the target$/,
    ],
  ];

  it.each(cases)('%s', async (_name, extra, columns, opts, why) => {
    await makeTarget('tgt_case', extra, columns);
    const outcome = await write('tgt_case', opts);
    expect(outcome.from).toBe('target scan');
    expect(outcome.why).toMatch(why);
    const check = partitionTarget('tgt_case', opts);
    try {
      await check.prepare();
      const row = await check.reconcile(DAY);
      expect(row.problems).toEqual([]);
    } finally {
      await check.close();
    }
  });

  it('the trigger case shows why: rows stored are not the rows read', async () => {
    await makeTarget('tgt_trigger', [
      `CREATE OR REPLACE FUNCTION fp_upper() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.label := upper(NEW.label); RETURN NEW; END $$`,
      `CREATE TRIGGER up BEFORE INSERT ON tgt_trigger FOR EACH ROW EXECUTE FUNCTION fp_upper()`,
    ]);
    await makeTarget('tgt_twin');
    const [changed, plain] = [await write('tgt_trigger'), await write('tgt_twin')];
    expect(changed.from).toBe('target scan');
    expect(changed.result.checksum).not.toBe(plain.result.checksum);
    const labels = await db.client.query<{ label: string | null }>(`SELECT label FROM tgt_trigger WHERE id = 1`);
    expect(labels.rows[0]?.label).toBe('ZEBRA');
  });
});
