/**
 * The measurements behind the source sanity gate, on a Postgres source, in one READ ONLY
 * transaction. Table and column names are resolved against the catalog and quoted; range
 * bounds are bound parameters. The rules (thresholds, medians) live in engine/safety.
 */
import type { PostgresConnection } from '../../../../shared/schemas.ts';
import type { PgClient } from './connect.ts';
import { openPg, query } from './connect.ts';
import { requireColumns, resolveTable, type TableInfo } from './catalog.ts';
import { quoteIdent } from './sql.ts';
import { refuseVolatileFunctions, userScalar } from './userQuery.ts';
import { checkReadOnlySelect } from '../../sql/readOnlySelect.ts';

export interface Bounds {
  start: string;
  end: string;
}

export class PostgresQualityProbe {
  private client: PgClient | undefined;
  private readonly tables = new Map<string, TableInfo>();

  constructor(
    private readonly connection: PostgresConnection,
    private readonly password: string | undefined,
    private readonly timeZone: string,
  ) {}

  private async open(): Promise<PgClient> {
    if (this.client) return this.client;
    const client = await openPg({
      url: this.connection.url,
      password: this.password,
      statementTimeoutMs: this.connection.statement_timeout_ms,
      lockTimeoutMs: this.connection.lock_timeout_ms,
      connectTimeoutMs: this.connection.connect_timeout_ms,
      applicationName: 'backfill-runbook:sanity',
    });
    try {
      await query(client, `SELECT set_config('TimeZone', :tz, false)`, { tz: this.timeZone });
      // Read only by construction: a sanity check can never write.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    } catch (err) {
      await client.end().catch(() => undefined); // no session survives a failed check
      throw err;
    }
    this.client = client;
    return client;
  }

  /** `"schema"."table"` and quoted columns, after checking they exist. */
  private async names(table: string, columns: string[], field: string): Promise<{ table: string; cols: string[] }> {
    const client = await this.open();
    let info = this.tables.get(table);
    if (!info) {
      info = await resolveTable(client, table, `${field}.table`);
      this.tables.set(table, info);
    }
    requireColumns(info, [...new Set(columns)], `${field}.column`);
    return { table: info.quoted, cols: columns.map((c) => quoteIdent(c)) };
  }

  async nullRate(table: string, column: string, timeColumn: string, b: Bounds, field: string): Promise<{ rows: number; nulls: number }> {
    const n = await this.names(table, [column, timeColumn], field);
    const [col, time] = n.cols as [string, string];
    const r = await query<{ rows: string; nulls: string }>(
      await this.open(),
      `SELECT count(*)::text AS rows, count(*) FILTER (WHERE ${col} IS NULL)::text AS nulls FROM ${n.table} WHERE ${time} >= :start AND ${time} < :end`,
      { start: b.start, end: b.end },
    );
    return { rows: Number(r.rows[0]?.rows ?? 0), nulls: Number(r.rows[0]?.nulls ?? 0) };
  }

  /** Row counts of many partitions in one statement. */
  async counts(table: string, timeColumn: string, bounds: Bounds[], field: string): Promise<number[]> {
    const n = await this.names(table, [timeColumn], field);
    const [time] = n.cols as [string];
    const r = await query<{ i: string; n: string }>(
      await this.open(),
      `SELECT b.i::text AS i, (SELECT count(*) FROM ${n.table} t WHERE t.${time} >= b.s AND t.${time} < b.e)::text AS n
         FROM unnest(:starts::timestamptz[], :ends::timestamptz[]) WITH ORDINALITY AS b(s, e, i) ORDER BY b.i`,
      { starts: bounds.map((x) => x.start), ends: bounds.map((x) => x.end) },
    );
    return r.rows.map((row) => Number(row.n));
  }

  async inversions(
    table: string,
    before: string,
    after: string,
    timeColumn: string,
    b: Bounds,
    field: string,
  ): Promise<{ rows: number; inverted: number }> {
    const n = await this.names(table, [before, after, timeColumn], field);
    const [first, second, time] = n.cols as [string, string, string];
    const r = await query<{ rows: string; inverted: string }>(
      await this.open(),
      `SELECT count(*)::text AS rows, count(*) FILTER (WHERE ${second} < ${first})::text AS inverted FROM ${n.table} WHERE ${time} >= :start AND ${time} < :end`,
      { start: b.start, end: b.end },
    );
    return { rows: Number(r.rows[0]?.rows ?? 0), inverted: Number(r.rows[0]?.inverted ?? 0) };
  }

  /** Minutes since the newest row (null when the table is empty). */
  async ageMinutes(table: string, timeColumn: string, field: string): Promise<number | null> {
    const n = await this.names(table, [timeColumn], field);
    const [time] = n.cols as [string];
    const r = await query<{ age: string | null }>(
      await this.open(),
      `SELECT (extract(epoch FROM now() - max(${time}::timestamptz)) / 60)::text AS age FROM ${n.table}`,
      {},
    );
    const age = r.rows[0]?.age;
    return age === null || age === undefined ? null : Number(age);
  }

  /** A custom rule: its SQL (user SQL: one read-only SELECT, see userQuery.ts) returns one number. */
  async scalar(sql: string, b: Bounds, field: string, where?: string): Promise<number | null> {
    const client = await this.open();
    const origin = { field, ...(where ? { where } : {}) };
    await refuseVolatileFunctions(client, (await checkReadOnlySelect(sql, origin)).functions, origin);
    return userScalar(client, sql, { partition_start: b.start, partition_end: b.end, run_id: 'sanity-check' }, origin);
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    await client.query('ROLLBACK').catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}
