/**
 * Snapshot and restore of Postgres partitions: the partition's rows are copied into a table of
 * the `backfill_runbook_snapshots` schema on the target itself (no row leaves the server), with
 * their count and checksum, and the partition's marker row. A restore puts rows and marker back
 * in one transaction and refuses to commit unless the checksum matches the snapshot's.
 */
import { createHash } from 'node:crypto';
import type { Partition } from '../../../shared/partitions.ts';
import type { PostgresTarget } from '../../../shared/schemas.ts';
import { InputError } from '../../../shared/errors.ts';
import { PartitionBusyError } from '../executor/errors.ts';
import { resolveTable, requireColumns, type TableInfo } from '../targets/postgres/catalog.ts';
import type { PgClient } from '../targets/postgres/connect.ts';
import { query } from '../targets/postgres/connect.ts';
import type { ClientPool } from '../targets/postgres/pool.ts';
import { checksumSql, partitionFilter, type TargetShape } from '../targets/postgres/statements.ts';

export const SNAPSHOT_SCHEMA = 'backfill_runbook_snapshots';

const SETUP_SQL = `CREATE SCHEMA IF NOT EXISTS backfill_runbook_snapshots;
CREATE TABLE IF NOT EXISTS backfill_runbook_snapshots.snapshots (
  run_id          text        NOT NULL,
  target_table    text        NOT NULL,
  partition_key   text        NOT NULL,
  snapshot_table  text        NOT NULL,
  rows            bigint      NOT NULL,
  checksum        text        NOT NULL,
  mark            jsonb,
  taken_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, target_table, partition_key)
);`;

export interface PgPartitionSnapshot {
  partition: string;
  rows: number;
  checksum: string;
  table: string;
}

/** Where a run's snapshot of one table lives: a name derived from both, within 63 bytes. */
export function snapshotTableName(runId: string, table: string): string {
  return `s_${createHash('sha256').update(`${runId}\0${table}`).digest('hex').slice(0, 32)}`;
}

export class PostgresSnapshots {
  private table!: TableInfo;
  private shape!: TargetShape;
  private snapQuoted = '';

  constructor(
    private readonly pool: ClientPool,
    private readonly spec: PostgresTarget,
    private readonly runId: string,
  ) {}

  /** the snapshot table, once prepared */
  get location(): string {
    return this.snapQuoted;
  }

  private get tableName(): string {
    return `${this.table.schema}.${this.table.name}`;
  }

  async prepare(create: boolean): Promise<void> {
    await this.with(async (c) => {
      this.table = await resolveTable(c, this.spec.table, 'target.table');
      requireColumns(this.table, [this.spec.partition_column], 'target.partition_column');
      const name = snapshotTableName(this.runId, this.tableName);
      this.snapQuoted = `"${SNAPSHOT_SCHEMA}"."${name}"`;
      this.shape = {
        quoted: this.table.quoted,
        partitionColumn: this.spec.partition_column,
        columns: this.table.columns.map((col) => col.name),
        key: [],
      };
      if (create) {
        await c.query(SETUP_SQL);
        await c.query(`CREATE TABLE IF NOT EXISTS ${this.snapQuoted} (LIKE ${this.table.quoted})`);
      }
    });
  }

  async snapshot(partition: Partition): Promise<PgPartitionSnapshot> {
    return this.inTransaction(partition, async (c, p) => {
      const filter = partitionFilter(this.shape);
      await query(c, `DELETE FROM ${this.snapQuoted} WHERE ${filter}`, p);
      const copied = await query(c, `INSERT INTO ${this.snapQuoted} SELECT * FROM ${this.table.quoted} WHERE ${filter}`, p);
      const [live, kept] = [await this.checksum(c, this.table.quoted, p), await this.checksum(c, this.snapQuoted, p)];
      if (live !== kept)
        throw new Error(`snapshot of ${this.tableName} partition ${partition.key} does not match the live rows (${live} vs ${kept})`);
      const mark = await this.markJson(c, partition.key);
      await query(
        c,
        `INSERT INTO backfill_runbook_snapshots.snapshots (run_id, target_table, partition_key, snapshot_table, rows, checksum, mark)
         VALUES (:run_id, :table, :key, :snap, :rows, :checksum, :mark::jsonb)
         ON CONFLICT (run_id, target_table, partition_key) DO UPDATE
            SET snapshot_table = EXCLUDED.snapshot_table, rows = EXCLUDED.rows, checksum = EXCLUDED.checksum, mark = EXCLUDED.mark, taken_at = now()`,
        {
          run_id: this.runId,
          table: this.tableName,
          key: partition.key,
          snap: this.snapQuoted,
          rows: copied.rowCount,
          checksum: kept,
          mark,
        },
      );
      return { partition: partition.key, rows: copied.rowCount, checksum: kept, table: this.snapQuoted };
    });
  }

  async restore(partition: Partition): Promise<PgPartitionSnapshot & { replaced: number }> {
    return this.inTransaction(partition, async (c, p) => {
      const rec = await query<{ rows: string; checksum: string; mark: unknown }>(
        c,
        `SELECT rows::text, checksum, mark FROM backfill_runbook_snapshots.snapshots WHERE run_id = :run_id AND target_table = :table AND partition_key = :key`,
        { run_id: this.runId, table: this.tableName, key: partition.key },
      );
      const saved = rec.rows[0];
      if (!saved)
        throw new InputError(`no snapshot of ${this.tableName} partition ${partition.key} for run ${this.runId}`, {
          field: '--partition',
          value: partition.key,
        });
      const filter = partitionFilter(this.shape);
      const replaced = await query(c, `DELETE FROM ${this.table.quoted} WHERE ${filter}`, p);
      const put = await query(c, `INSERT INTO ${this.table.quoted} SELECT * FROM ${this.snapQuoted} WHERE ${filter}`, p);
      const now = await this.checksum(c, this.table.quoted, p);
      if (now !== saved.checksum || put.rowCount !== Number(saved.rows)) {
        throw new Error(
          `restore of ${this.tableName} partition ${partition.key} would not match its snapshot (${put.rowCount} rows, ${now}; snapshot ${saved.rows} rows, ${saved.checksum}): rolled back`,
        );
      }
      if (await this.hasMarks(c)) {
        await query(c, `DELETE FROM backfill_runbook.partition_marks WHERE target_table = :table AND partition_key = :key`, {
          table: this.tableName,
          key: partition.key,
        });
        if (saved.mark !== null) {
          await query(
            c,
            `INSERT INTO backfill_runbook.partition_marks SELECT * FROM jsonb_populate_record(NULL::backfill_runbook.partition_marks, :mark::jsonb)`,
            { mark: JSON.stringify(saved.mark) },
          );
        }
      }
      return { partition: partition.key, rows: put.rowCount, checksum: now, table: this.snapQuoted, replaced: replaced.rowCount };
    });
  }

  private async checksum(c: PgClient, quoted: string, p: Record<string, string>): Promise<string> {
    const r = await query<{ md5: string }>(c, checksumSql({ ...this.shape, quoted }), p);
    return `md5:${r.rows[0]?.md5 ?? ''}`;
  }

  private async hasMarks(c: PgClient): Promise<boolean> {
    const r = await query<{ t: string | null }>(c, `SELECT to_regclass('backfill_runbook.partition_marks')::text AS t`);
    return Boolean(r.rows[0]?.t);
  }

  private async markJson(c: PgClient, key: string): Promise<string | null> {
    if (!(await this.hasMarks(c))) return null;
    const r = await query<{ mark: string }>(
      c,
      `SELECT row_to_json(m)::text AS mark FROM backfill_runbook.partition_marks m WHERE target_table = :table AND partition_key = :key`,
      {
        table: this.tableName,
        key,
      },
    );
    return r.rows[0]?.mark ?? null;
  }

  /** One transaction holding the executor's advisory lock of (table, partition). */
  private async inTransaction<T>(partition: Partition, fn: (c: PgClient, p: Record<string, string>) => Promise<T>): Promise<T> {
    return this.with(async (c) => {
      await c.query('BEGIN');
      try {
        const lock = await query<{ locked: boolean }>(c, `SELECT pg_try_advisory_xact_lock(hashtextextended(:lock_key, 0)) AS locked`, {
          lock_key: `backfill_runbook:${this.tableName}:${partition.key}`,
        });
        if (!lock.rows[0]?.locked)
          throw new PartitionBusyError(`partition ${partition.key} of ${this.tableName} is being written by a run right now`);
        const result = await fn(c, { partition_start: partition.start, partition_end: partition.end });
        await c.query('COMMIT');
        return result;
      } catch (err) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  private async with<T>(fn: (c: PgClient) => Promise<T>): Promise<T> {
    const c = await this.pool.acquire();
    let broken = false;
    try {
      return await fn(c);
    } catch (err) {
      broken = true;
      throw err;
    } finally {
      this.pool.release(c, broken);
    }
  }

  async close(): Promise<void> {
    await this.pool.closeAll();
  }
}
