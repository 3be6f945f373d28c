/**
 * `backfill_runbook.partition_marks` on the target: one row per (table, partition), written in
 * the same transaction as the partition's data (docs/design.md §6 step 4). It is the truth on resume:
 * a commit whose acknowledgement was lost is found here, not redone blindly.
 */
import { InputError } from '../../../../shared/errors.ts';
import type { PartitionMark } from '../../executor/types.ts';
import type { PgClient, Statement } from './connect.ts';
import { query } from './connect.ts';

export const MARKS_TABLE = 'backfill_runbook.partition_marks';

/** The one-time SQL an administrator runs when the backfill role may not create schemas. */
export const MARKS_SETUP_SQL = `CREATE SCHEMA IF NOT EXISTS backfill_runbook;
CREATE TABLE IF NOT EXISTS backfill_runbook.partition_marks (
  target_table  text        NOT NULL,
  partition_key text        NOT NULL,
  run_id        text        NOT NULL,
  plan_hash     text        NOT NULL,
  attempt       integer     NOT NULL,
  rows_written  bigint      NOT NULL,
  checksum      text        NOT NULL,
  published_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (target_table, partition_key)
);`;

const INSUFFICIENT_PRIVILEGE = '42501';

/** Creates the marker table on first use, or explains the one-time setup when not allowed. */
export async function ensureMarksTable(client: PgClient, role: string): Promise<void> {
  const exists = await query<{ t: string | null }>(client, `SELECT to_regclass('backfill_runbook.partition_marks')::text AS t`, {});
  if (exists.rows[0]?.t) return;
  try {
    await client.query(MARKS_SETUP_SQL);
  } catch (err) {
    const code = (err as { code?: string }).code;
    // Two runs creating the schema at the same moment race on the catalog; the loser is fine.
    if (code === '23505' || code === '42P06' || code === '42P07') return;
    if (code === INSUFFICIENT_PRIVILEGE) {
      throw new InputError(
        `the role "${role}" may not create the backfill_runbook schema on the target. Ask an administrator to run once:\n\n${MARKS_SETUP_SQL}\nGRANT USAGE ON SCHEMA backfill_runbook TO "${role}";\nGRANT SELECT, INSERT, UPDATE ON backfill_runbook.partition_marks TO "${role}";`,
        { field: 'target.connection', hint: 'see README, "Target permissions"' },
      );
    }
    throw err;
  }
}

interface MarkRow {
  partition_key: string;
  run_id: string;
  plan_hash: string;
  attempt: number;
  rows_written: string;
  checksum: string;
  published_at: Date;
}

/**
 * The markers of `keys`; none when the marker table does not exist yet (a target nothing was
 * ever published to, which a dry run must leave exactly so: it never creates the table).
 */
export async function readMarks(client: PgClient, targetTable: string, keys: readonly string[]): Promise<Map<string, PartitionMark>> {
  const exists = await query<{ t: string | null }>(client, `SELECT to_regclass('backfill_runbook.partition_marks')::text AS t`, {});
  if (!exists.rows[0]?.t) return new Map();
  const result = await query<MarkRow>(
    client,
    `SELECT partition_key, run_id, plan_hash, attempt, rows_written, checksum, published_at
       FROM backfill_runbook.partition_marks
      WHERE target_table = :table AND partition_key = ANY(:keys)`,
    { table: targetTable, keys: [...keys] },
  );
  return new Map(
    result.rows.map((r) => [
      r.partition_key,
      {
        partitionKey: r.partition_key,
        runId: r.run_id,
        planHash: r.plan_hash,
        attempt: r.attempt,
        rowsWritten: Number(r.rows_written),
        checksum: r.checksum,
        publishedAt: new Date(r.published_at).toISOString(),
      },
    ]),
  );
}

const MARK_COLUMNS = `(target_table, partition_key, run_id, plan_hash, attempt, rows_written, checksum, published_at)`;
const MARK_REPLACES = `ON CONFLICT (target_table, partition_key) DO UPDATE
        SET run_id = EXCLUDED.run_id, plan_hash = EXCLUDED.plan_hash, attempt = EXCLUDED.attempt,
            rows_written = EXCLUDED.rows_written, checksum = EXCLUDED.checksum, published_at = EXCLUDED.published_at`;

/**
 * The marker upsert as a data-modifying CTE reading the checksum from `measured`, the CTE that
 * measures the partition (a row with "__checksum"): one statement, one round trip, instead of
 * two. Parameters: :table :key :run_id :plan_hash :attempt :rows :checksum_prefix.
 */
export function markFromMeasuresSql(measured: string): string {
  return `INSERT INTO backfill_runbook.partition_marks AS pm ${MARK_COLUMNS}
     SELECT :table::text, :key::text, :run_id::text, :plan_hash::text, :attempt::int, :rows::bigint, :checksum_prefix::text || ${measured}."__checksum", now()
       FROM ${measured}
     ${MARK_REPLACES}`;
}

/** The statement that writes (or replaces) `mark` for `targetTable`. */
export function markStatement(targetTable: string, mark: Omit<PartitionMark, 'publishedAt'>): Statement {
  return {
    sql: `INSERT INTO backfill_runbook.partition_marks AS m ${MARK_COLUMNS}
     VALUES (:table, :key, :run_id, :plan_hash, :attempt, :rows, :checksum, now())
     ${MARK_REPLACES}`,
    params: {
      table: targetTable,
      key: mark.partitionKey,
      run_id: mark.runId,
      plan_hash: mark.planHash,
      attempt: mark.attempt,
      rows: mark.rowsWritten,
      checksum: mark.checksum,
    },
  };
}

/** Inside the partition's transaction, just before COMMIT. */
export async function writeMark(client: PgClient, targetTable: string, mark: Omit<PartitionMark, 'publishedAt'>): Promise<void> {
  const { sql, params } = markStatement(targetTable, mark);
  await query(client, sql, params);
}
