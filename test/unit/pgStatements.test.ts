import { describe, expect, it } from 'vitest';
import { markFromMeasuresSql } from '../../electron/engine/targets/postgres/marks.ts';
import {
  beginInSnapshotSql,
  beginWriteSql,
  checksumSql,
  copyIntoSql,
  measureAndChecksumSql,
  measureAndMarkSql,
  recordHashProbeSql,
  sourceFingerprintSql,
  type TargetShape,
} from '../../electron/engine/targets/postgres/statements.ts';

const shape: TargetShape = { quoted: '"mart"."events"', partitionColumn: 'day', columns: ['day', 'id', 'amount'], key: ['day', 'id'] };

describe('the write transaction and its exported snapshot', () => {
  it.each([
    [true, 'BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT pg_export_snapshot() AS snapshot'],
    [false, 'BEGIN ISOLATION LEVEL REPEATABLE READ'],
  ])('with validation rules %s: %s', (rules, sql) => {
    expect(beginWriteSql(rules)).toBe(sql);
  });

  it.each([
    ['00000003-0000001B-1', `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '00000003-0000001B-1'`],
    ['0000000A-00000F2C-12', `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '0000000A-00000F2C-12'`],
  ])('imports snapshot %s', (id, sql) => {
    expect(beginInSnapshotSql(id)).toBe(sql);
  });

  it.each([["x'; DROP TABLE t; --"], [''], ['00000003'], ['00000003-0000001B-1 ']])('refuses anything but a snapshot id: %j', (id) => {
    expect(() => beginInSnapshotSql(id)).toThrow(`unexpected snapshot id ${JSON.stringify(id)}`);
  });
});

describe('checksums hash the whole row as t.*, never a bare t (a column may be named "t")', () => {
  it.each([
    ['record', measureAndChecksumSql(shape, ['amount'], 'record'), 'hash_record_extended(t.*, 0)'],
    ['text', measureAndChecksumSql(shape, ['amount'], 'text'), 'md5((t.*)::text)'],
    ['checksumSql', checksumSql(shape), 'md5((t.*)::text)'],
  ])('%s', (_name, sql, expected) => {
    expect(sql).toContain(expected);
    expect(sql).not.toMatch(/\(t[,)]|\bt::/);
  });

  it('probes the row type with a row of NULLs', () => {
    expect(recordHashProbeSql(shape)).toBe('SELECT hash_record_extended(x.*, 0) AS h FROM (SELECT (NULL::"mart"."events").*) AS x');
  });
});

describe('measures and marker in one statement', () => {
  it('writes the marker from the measured checksum, with typed parameters', () => {
    const sql = measureAndMarkSql(shape, ['amount'], 'record', markFromMeasuresSql).replace(/\s+/g, ' ');
    expect(sql).toBe(
      'WITH measured AS (SELECT count(*)::bigint AS "rows", sum(t."amount")::text AS "amount", ' +
        `md5(count(*)::text || ':' || coalesce(sum(hash_record_extended(t.*, 0)), 0)::text) AS "__checksum" ` +
        'FROM "mart"."events" AS t WHERE t."day" >= :partition_start AND t."day" < :partition_end), ' +
        'mark AS (INSERT INTO backfill_runbook.partition_marks AS pm (target_table, partition_key, run_id, plan_hash, attempt, rows_written, checksum, published_at) ' +
        `SELECT :table::text, :key::text, :run_id::text, :plan_hash::text, :attempt::int, :rows::bigint, :checksum_prefix::text || measured."__checksum", now() FROM measured ` +
        'ON CONFLICT (target_table, partition_key) DO UPDATE SET run_id = EXCLUDED.run_id, plan_hash = EXCLUDED.plan_hash, attempt = EXCLUDED.attempt, ' +
        'rows_written = EXCLUDED.rows_written, checksum = EXCLUDED.checksum, published_at = EXCLUDED.published_at) ' +
        'SELECT * FROM measured',
    );
  });
});

describe('the fingerprint from the source rows', () => {
  it('hashes each row cast to the table row type, columns in the table order, like a hash of t.*', () => {
    const sql = sourceFingerprintSql(
      'select amount, id, day from s where day >= :partition_start;',
      shape,
      ['day', 'id', 'amount'],
      ['amount'],
      'record',
    ).replace(/\s+/g, ' ');
    expect(sql).toBe(
      'SELECT (count(*) FILTER (WHERE src."day" >= :partition_start AND src."day" < :partition_end))::bigint AS "rows", sum(src."amount")::text AS "amount", ' +
        `md5(count(*)::text || ':' || coalesce(sum(hash_record_extended(ROW(src."day", src."id", src."amount")::"mart"."events", 0)), 0)::text) AS "__checksum" ` +
        'FROM ( select amount, id, day from s where day >= :partition_start ) AS src',
    );
  });

  it('uses the text form of the same row where the table has no record hash', () => {
    expect(sourceFingerprintSql('select 1', shape, ['day', 'id', 'amount'], [], 'text')).toContain(
      `md5((ROW(src."day", src."id", src."amount")::"mart"."events")::text)`,
    );
  });
});

describe('COPY into the target', () => {
  it.each([
    [false, 'COPY "mart"."events" ("day", "id", "amount") FROM STDIN'],
    [true, 'COPY "mart"."events" ("day", "id", "amount") FROM STDIN (FORMAT binary)'],
  ])('binary %s', (binary, sql) => {
    expect(copyIntoSql(shape.quoted, shape.columns, binary)).toBe(sql);
  });
});
