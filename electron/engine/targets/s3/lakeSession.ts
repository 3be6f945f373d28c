/**
 * One DuckDB database per partition, shut in with the partition's staged files.
 *
 * **Important**: what a job's SQL (source.query, S3 sides of validation rules) can do is
 * bounded twice over:
 *   1. Before it runs it must be exactly one statement, and a SELECT (DuckDB's own parser
 *      says so): no COPY, ATTACH, INSTALL, LOAD, SET, PRAGMA assignments or a second statement.
 *   2. The database it runs in has external access off, may touch only the partition's own
 *      folder (allowed_directories), loads no extension, and its configuration is locked, so
 *      `read_csv('/etc/passwd')`, `glob('/*')` or a `SET enable_external_access` fail with
 *      DuckDB's permission error — whatever slipped past the first check.
 * Objects reach the folder through the project's own S3 client (stage.ts); DuckDB never
 * opens a network connection (httpfs is neither installed nor loadable).
 *
 * The DuckDB module is loaded here, on first use, never when the CLI starts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type * as DuckApi from '@duckdb/node-api';
import { InputError } from '../../../../shared/errors.ts';
import { vendored } from '../../vendored.ts';
import type { Measures } from '../../executor/types.ts';
import { asSubquery, bindPartition, ident, literal } from './lakeSql.ts';

/**
 * DuckDB's API, loaded on first use (vendored.ts keeps it): in the built command from one bundle
 * of its own, compiled from a code cache — one file instead of 181.
 */
function duck(): typeof DuckApi {
  return vendored<typeof DuckApi>('@duckdb/node-api');
}

/** DuckDB's working memory per partition; beyond it, it spills to the partition's folder. */
export const LAKE_MEMORY_LIMIT = process.env.BACKFILL_RUNBOOK_LAKE_MEMORY ?? '128MB';
const LAKE_THREADS = '2';

export type PartitionValues = { partition_start: string; partition_end: string; run_id: string };

/**
 * A partition's folder and its DuckDB session, which may still be opening: a source stages its
 * objects into `dir` while DuckDB starts, and waits for `session()` only to define `source`.
 */
export interface Lake {
  readonly dir: string;
  session(): Promise<LakeSession>;
}

/**
 * A Lake over `dir` whose session opens on first use. `close()` closes it whether it is open,
 * still opening or never asked for, and may be called more than once; the caller removes `dir`.
 */
export function openLake(dir: string, timezone: string): Lake & { close(): Promise<void> } {
  let opening: Promise<LakeSession> | undefined;
  let closed = false;
  return {
    dir,
    session: () => {
      if (closed) return Promise.reject(new Error("the partition's DuckDB session is closed"));
      return (opening ??= LakeSession.open(dir, timezone));
    },
    close: async () => {
      if (closed) return;
      closed = true;
      (await opening?.catch(() => undefined))?.close();
    },
  };
}

export class LakeSession {
  private constructor(
    private readonly instance: DuckApi.DuckDBInstance,
    private readonly connection: DuckApi.DuckDBConnection,
    /** the partition's folder: staged objects, outputs and DuckDB's spill files, nothing else */
    readonly dir: string,
    /** local file → its s3:// URL, so messages name objects, not temp files */
    private readonly names: Map<string, string>,
  ) {}

  static async open(dir: string, timezone: string): Promise<LakeSession> {
    const spill = join(dir, '.spill');
    mkdirSync(spill, { recursive: true });
    const instance = await duck().DuckDBInstance.create(':memory:', {
      threads: LAKE_THREADS,
      memory_limit: LAKE_MEMORY_LIMIT,
      temp_directory: spill,
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      // an extension folder that does not exist: nothing can be loaded from it
      extension_directory: join(dir, '.no-extensions'),
    });
    const connection = await instance.connect();
    try {
      // Order matters: the allowed folder and the zone are set before access is cut and the
      // configuration locked; after that no statement can change any of them.
      await connection.run(`SET allowed_directories = [${literal(dir.endsWith('/') ? dir : `${dir}/`)}]`);
      await connection.run(`SET TimeZone = ${literal(timezone)}`);
      await connection.run('SET preserve_insertion_order = true');
      // **Hazard**: DuckDB 1.5's TopN-window rewrite fails with an INTERNAL error on
      // `QUALIFY row_number() … = 1` followed by ORDER BY (the refine step's dedupe); off.
      await connection.run("SET disabled_optimizers = 'top_n_window_elimination'");
      await connection.run('SET enable_external_access = false');
      await connection.run('SET lock_configuration = true');
    } catch (err) {
      connection.closeSync();
      instance.closeSync();
      throw err;
    }
    return new LakeSession(instance, connection, dir, new Map());
  }

  /** Names a staged file by its object in messages. */
  name(file: string, url: string): void {
    this.names.set(file, url);
  }

  /** Our own statements (views over staged files, COPY to the partition's folder). */
  async run(sql: string, values: readonly string[] = []): Promise<number> {
    try {
      const r = await this.connection.runAndReadAll(sql, [...values]);
      const first = r.getRows()[0]?.[0];
      return typeof first === 'bigint' || typeof first === 'number' ? Number(first) : 0;
    } catch (err) {
      throw this.explain(err);
    }
  }

  /** Rows of our own SQL (never a job's): checks and tests. */
  async rows(sql: string): Promise<Record<string, DuckApi.Json>[]> {
    try {
      return (await this.connection.runAndReadAll(sql)).getRowObjectsJson();
    } catch (err) {
      throw this.explain(err);
    }
  }

  async view(name: 'source' | 'target', tableSql: string): Promise<void> {
    await this.run(`CREATE OR REPLACE TEMP VIEW ${ident(name)} AS SELECT * FROM ${tableSql}`);
  }

  async columns(relation: 'source' | 'target'): Promise<string[]> {
    const r = await this.connection.runAndReadAll(`DESCRIBE ${ident(relation)}`);
    return r.getRowObjectsJson().map((row) => jsonText(row.column_name ?? null));
  }

  /**
   * A job's SQL checked (one SELECT, see the file's comment) and bound: the partition's values
   * replace :partition_start, :partition_end and :run_id as parameters. Returns a derived table.
   */
  async userSelect(sql: string, field: string, values: PartitionValues): Promise<{ table: string; values: string[] }> {
    const bound = bindPartition(sql.trim().replace(/;+\s*$/, ''), values);
    let extracted: DuckApi.DuckDBExtractedStatements;
    try {
      extracted = await this.connection.extractStatements(bound.text);
    } catch (err) {
      throw this.userError(err, field, sql);
    }
    if (extracted.count !== 1) {
      throw new InputError(`${field} must be one SELECT statement, it has ${extracted.count}`, { field, value: sql });
    }
    let prepared: DuckApi.DuckDBPreparedStatement;
    try {
      prepared = await extracted.prepare(0);
    } catch (err) {
      throw this.userError(err, field, sql);
    }
    const type = prepared.statementType;
    prepared.destroySync();
    if (type !== duck().StatementType.SELECT) {
      const names = duck().StatementType as unknown as Record<number, string>;
      throw new InputError(
        `${field} must be a SELECT that reads the partition; it is a ${names[type] ?? String(type)} statement, which DuckDB would run to change files, settings or extensions`,
        { field, value: sql },
      );
    }
    return { table: asSubquery(bound.text), values: bound.values };
  }

  /** The first row of a job's SELECT (a validation rule's measures). */
  async measures(sql: string, field: string, values: PartitionValues): Promise<Measures> {
    const { table, values: bound } = await this.userSelect(sql, field, values);
    try {
      const r = await this.connection.runAndReadAll(`SELECT * FROM ${table} AS q LIMIT 1`, bound);
      return measuresOfRow(r.getRowObjectsJson()[0] ?? {});
    } catch (err) {
      throw this.userError(err, field, sql);
    }
  }

  /** Our measures (`count(*) AS records`) over a checked SELECT. */
  async measuresOf(select: { table: string; values: string[] }, list: string, field = 'source.query'): Promise<Measures> {
    try {
      const r = await this.connection.runAndReadAll(`SELECT ${list} FROM ${select.table} AS q`, select.values);
      return measuresOfRow(r.getRowObjectsJson()[0] ?? {});
    } catch (err) {
      throw this.userError(err, field, '');
    }
  }

  /** Runs `COPY (select) TO file (options)` for a job's query; returns the rows written. */
  async copyUserSelect(
    select: { table: string; values: string[] },
    file: string,
    options: string,
    field: string,
    sql: string,
  ): Promise<number> {
    try {
      const r = await this.connection.runAndReadAll(
        `COPY (SELECT * FROM ${select.table} AS q) TO ${literal(file)} (${options})`,
        select.values,
      );
      return Number(r.getRows()[0]?.[0] ?? 0);
    } catch (err) {
      throw this.userError(err, field, sql);
    }
  }

  close(): void {
    try {
      this.connection.closeSync();
    } finally {
      this.instance.closeSync();
    }
  }

  /** A failure of the job's SQL: the user's to fix (exit 2), naming the field and DuckDB's reason. */
  private userError(err: unknown, field: string, sql: string): Error {
    const explained = this.explain(err);
    const text = explained.message;
    // what the machine ran out of is not the job's fault: a partition failure, retried
    if (!(explained instanceof InputError)) return explained;
    const outside = /Permission Error|disabled by configuration|configuration has been locked/i.test(text);
    return new InputError(
      outside
        ? `${field} tried to reach outside the partition's objects, which a job's SQL may not do: ${text}`
        : `${field} failed in DuckDB: ${text}`,
      { field, value: sql },
    );
  }

  /** DuckDB's message with staged file names replaced by the objects they hold; bad data is the user's. */
  private explain(err: unknown): Error {
    let text = err instanceof Error ? err.message : String(err);
    for (const [file, url] of this.names) text = text.replaceAll(file, url);
    text = text.replaceAll(this.dir, '<partition>');
    if (
      /Invalid Input Error|Conversion Error|Parser Error|Binder Error|Catalog Error|Permission Error|corrupt|magic bytes|No magic|not a parquet/i.test(
        text,
      )
    ) {
      // DuckDB's first lines say what and where (file, line); the rest is a hint list and the raw row
      const lines = text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !/^(LINE \d+:|\^)/.test(l));
      return new InputError(lines.slice(0, 6).join(' — '), {});
    }
    if (/Out of Memory Error/i.test(text)) {
      // DuckDB's own advice (SET threads, SET memory_limit) names settings a job cannot change.
      const first = text.split('\n')[0]?.trim() ?? text;
      return new Error(
        `DuckDB ran out of its working memory for this partition (${LAKE_MEMORY_LIMIT}; it spills to disk where it can, but the Parquet writer and some joins cannot): ${first}. Raise it with BACKFILL_RUNBOOK_LAKE_MEMORY (e.g. 512MB) and resume the run.`,
        { cause: err },
      );
    }
    return new Error(text, { cause: err });
  }
}

function jsonText(v: DuckApi.Json): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A result row as measures: numbers stay numbers, everything else its text (big integers and decimals keep their digits). */
function measuresOfRow(row: Record<string, DuckApi.Json>): Measures {
  const out: Measures = {};
  for (const [k, v] of Object.entries(row)) out[k] = v === null ? null : typeof v === 'number' ? v : jsonText(v);
  return out;
}
