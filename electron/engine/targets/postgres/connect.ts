// Opening a session on a target, with the timeouts every backfill session needs, and the
// thin query/COPY helpers. With catalog.ts this is the only code that imports pg.
import { createRequire } from 'node:module';
import type { Readable, Writable } from 'node:stream';
import type pg from 'pg';
import type pgCopyStreams from 'pg-copy-streams';
import { ConnectionError, InputError, showValue } from '../../../../shared/errors.ts';
import { describePgError } from './errors.ts';
import { bindNamed } from './sql.ts';

/** The driver's client type, so the rest of the engine never imports pg itself. */
export type PgClient = pg.Client;

// The driver loads on the first connection, not with the module: an S3-only command never pays
// for it (about 80 ms on Node 20, most of it pg probing for a Cloudflare runtime; bench (k)).
const require = createRequire(import.meta.url);
let driver: { pg: typeof pg; copy: typeof pgCopyStreams } | undefined;
function pgDriver(): { pg: typeof pg; copy: typeof pgCopyStreams } {
  driver ??= { pg: require('pg') as typeof pg, copy: require('pg-copy-streams') as typeof pgCopyStreams };
  return driver;
}

export interface PgConnectOptions {
  /** postgres://user@host:port/database — the password comes separately, never from files. */
  url: string;
  password?: string;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  connectTimeoutMs: number;
  applicationName?: string;
}

/** A session left idle inside a transaction holds its locks; end it after this long. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 10 * 60_000;

/** Why a connection could not be opened, in words an operator can act on. Never holds a password. */
export class PgConnectError extends ConnectionError {
  override readonly name = 'PgConnectError';
  /** The underlying SQLSTATE or Node code (ECONNREFUSED …), so classifyPgError can judge it. */
  readonly code: string | undefined;
  constructor(message: string, target: string, cause: unknown) {
    super(message, target, { cause });
    const code = (cause as { code?: unknown } | null)?.code;
    this.code = typeof code === 'string' ? code : undefined;
  }
}

export async function openPg(opts: PgConnectOptions): Promise<PgClient> {
  if (!/^postgres(?:ql)?:\/\//i.test(opts.url)) {
    throw new InputError(`url: ${showValue(redactUrl(opts.url))} is not a postgres:// URL (postgres://user@host:5432/database)`, {
      field: 'url',
      value: redactUrl(opts.url),
    });
  }
  const client = new (pgDriver().pg.Client)({
    connectionString: opts.url,
    connectionTimeoutMillis: opts.connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // **Hazard**: pg lets the connection string override `password` in the config (a URL without
  // one yields ''), so the separately kept password is set on the client itself.
  if (opts.password !== undefined) client.password = opts.password;
  // **Important**: a connection that dies while idle emits 'error'; without a listener Node
  // crashes the whole process. The failure resurfaces on the next query, where it is handled.
  client.on('error', () => undefined);
  const target = `${client.host}:${client.port}/${client.database ?? client.user ?? ''}`;
  try {
    await client.connect();
    // Set with SQL after connecting rather than as startup parameters: connection poolers such
    // as PgBouncer refuse unknown startup parameters.
    await client.query(
      `select set_config('statement_timeout', $1, false), set_config('lock_timeout', $2, false),
              set_config('idle_in_transaction_session_timeout', $3, false), set_config('application_name', $4, false)`,
      [
        `${Math.max(0, Math.round(opts.statementTimeoutMs))}ms`,
        `${Math.max(0, Math.round(opts.lockTimeoutMs))}ms`,
        `${IDLE_IN_TRANSACTION_TIMEOUT_MS}ms`,
        opts.applicationName ?? 'backfill-runbook',
      ],
    );
  } catch (err) {
    await client.end().catch(() => undefined);
    const message = scrub(`cannot connect to PostgreSQL at ${target}: ${explainConnectError(err, client)}`, opts.password);
    throw new PgConnectError(message, target, err);
  }
  return client;
}

interface ConnectTarget {
  host: string;
  port: number;
  user?: string | undefined;
  database?: string | undefined;
}

/** The cause of a failed connect in words, with what to do next. Exported for tests. */
export function explainConnectError(err: unknown, target: ConnectTarget): string {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : String(err);
  const at = `${target.host}:${target.port}`;
  const user = JSON.stringify(target.user ?? '');
  switch (code ?? '') {
    case 'ECONNREFUSED':
      return `connection refused: is PostgreSQL running at ${at}?`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host ${JSON.stringify(target.host)} was not found: check the host in the connection url`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
      return `${at} cannot be reached (${code}): check the host, the port and any firewall or VPN`;
    case 'ECONNRESET':
      return `the server closed the connection while it was being opened: check that ${at} is PostgreSQL and its SSL settings`;
    case '28P01':
      return `password authentication failed for user ${user}: set the password_env variable (or the saved password) to this user's password`;
    case '28000':
      return `the server refused user ${user}: ${message} — check the user in the url and the server's pg_hba.conf`;
    case '3D000':
      return `database ${JSON.stringify(target.database ?? '')} does not exist: check the database in the connection url`;
    case '53300':
      return `the server has no free connections (too many clients): try again later or lower concurrency`;
    case '57P03':
      return `the server is starting up or shutting down: try again in a moment`;
    default:
      break;
  }
  if (/client password must be a (?:non-empty )?string/.test(message)) {
    return `the server asks for a password for user ${user} but none was given: set the password_env variable`;
  }
  if (message === 'timeout expired' || message.startsWith('Connection terminated due to connection timeout')) {
    return `no answer from ${at} within the connect timeout: check the host, the port and any firewall or VPN`;
  }
  return describePgError(err);
}

/** Removes the password from any text we build, in case a driver message ever echoed it. */
function scrub(text: string, password: string | undefined): string {
  return password !== undefined && password.length >= 3 ? text.split(password).join('***') : text;
}

/** postgres://u:secret@h/db?password=x → postgres://u:***@h/db?password=*** */
export function redactUrl(url: string): string {
  let result = url;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  if (scheme) {
    const rest = url.slice(scheme[0].length);
    const authorityEnd = rest.search(/[/?#]/);
    const authority = authorityEnd === -1 ? rest : rest.slice(0, authorityEnd);
    const at = authority.lastIndexOf('@');
    const colon = authority.indexOf(':');
    if (at !== -1 && colon !== -1 && colon < at) {
      result = scheme[0] + authority.slice(0, colon) + ':***' + authority.slice(at) + rest.slice(authority.length);
    }
  }
  return result.replace(/([?&]password=)[^&#]*/gi, '$1***');
}

/** A column of a query's result as the server describes it (RowDescription). */
export interface QueryField {
  name: string;
  dataTypeID: number;
  dataTypeModifier: number;
}

export interface QueryOutcome<T> {
  rows: T[];
  rowCount: number;
  /** The result's columns, in order (also present when no row came back). */
  fields: QueryField[];
}

/**
 * node-postgres's query config with its `queryMode` (missing from @types/pg): 'extended' sends
 * Parse/Bind/Execute even without parameters.
 */
type ExtendedQuery = pg.QueryConfig & { queryMode: 'extended' };

/**
 * Runs `sql` with `:name` parameters bound (see bindNamed); values never enter the text.
 *
 * **Important**: always over the extended protocol, with or without parameters. node-postgres
 * uses the simple protocol for a text without values, and the simple protocol runs every
 * statement a text holds — `select 1; delete from t` deletes. The extended protocol's Parse
 * takes exactly one statement ("cannot insert multiple commands into a prepared statement").
 * Scripts of our own that are meant to be several statements go through pipelined().
 */
export async function query<T = Record<string, unknown>>(
  client: PgClient,
  sql: string,
  params: Readonly<Record<string, unknown>> = {},
): Promise<QueryOutcome<T>> {
  const { text, values } = bindNamed(sql, params);
  const config: ExtendedQuery = { text, values, queryMode: 'extended' };
  const result = await client.query(config);
  return {
    rows: result.rows as T[],
    rowCount: result.rowCount ?? 0,
    fields: result.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID, dataTypeModifier: f.dataTypeModifier })),
  };
}

/**
 * A text sent as it is — no `:name` binding, for a PREPARE whose body holds its own `$n` — over
 * the extended protocol like query(): one statement, whatever the text says.
 */
export async function queryText(client: PgClient, text: string): Promise<void> {
  const config: ExtendedQuery = { text, values: [], queryMode: 'extended' };
  await client.query(config);
}

/** A statement with its `:name` parameters (see bindNamed). */
export interface Statement {
  sql: string;
  params?: Readonly<Record<string, unknown>>;
}

/** What the server answered one statement: a result, or one per part of a multi-statement query. */
export interface Answer {
  results: { command: string; rows: Record<string, unknown>[] }[];
}

/**
 * Sends `statements` together and reads their answers in order: one round trip for all of them
 * (the driver's pipeline mode, on just for these, on a session nothing else is using). All are
 * bound first, so one that cannot be bound sends none. **Hazard**: on the server each is its
 * own unit — one that fails does not stop those after it — so the caller judges every answer.
 */
export async function pipelined(client: PgClient, statements: readonly Statement[]): Promise<PromiseSettledResult<Answer>[]> {
  const bound = statements.map((s) => bindNamed(s.sql, s.params ?? {}));
  const driver = client as PgClient & { pipeline: boolean };
  driver.pipeline = true;
  try {
    // Queued at once, before pipeline mode is switched off again after the last answer.
    return await Promise.allSettled(
      bound.map(async ({ text, values }): Promise<Answer> => {
        const answer: unknown = await (values.length > 0 ? client.query(text, values) : client.query(text));
        return { results: (Array.isArray(answer) ? answer : [answer]) as Answer['results'] };
      }),
    );
  } finally {
    driver.pipeline = false;
  }
}

/** The answers of pipelined(), or the first failure among them. */
export function answered(settled: readonly PromiseSettledResult<Answer>[]): Answer[] {
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<Answer>).value);
}

/** `COPY … TO STDOUT` as a readable stream; pipe it with stream.pipeline. */
export function copyTo(client: PgClient, sql: string): Readable & { rowCount: number } {
  return client.query(pgDriver().copy.to(sql));
}

/** `COPY … FROM STDIN` as a writable stream; 'finish' fires once the server has acknowledged it. */
export function copyFrom(client: PgClient, sql: string): Writable & { rowCount: number } {
  return client.query(pgDriver().copy.from(sql));
}
