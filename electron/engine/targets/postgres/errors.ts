// What a PostgreSQL failure means for the executor: retry the partition (transient) or stop
// and show the operator (permanent), and how to say it in one line.

export type ErrorClass = 'transient' | 'permanent';

/**
 * SQLSTATEs worth retrying: the same statement may well succeed on the next attempt.
 * - 40001 serialization_failure, 40P01 deadlock_detected: the transaction lost a race.
 * - 55P03 lock_not_available: our lock_timeout fired (or NOWAIT); the holder may be gone soon.
 * - 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now: the server restarts.
 * - 53300 too_many_connections.
 * - class 08 connection_exception.
 * Deliberately permanent: 57014 query_canceled. It is raised both by our statement_timeout and
 * by an operator's pg_cancel_backend; re-running a statement that hit its timeout with the same
 * timeout mostly wastes the window again, and an operator's cancel must never be undone by a
 * retry. The executor reports it and the operator decides.
 */
const TRANSIENT_SQLSTATES = new Set(['40001', '40P01', '55P03', '57P01', '57P02', '57P03', '53300']);

/** Socket-level failures: the network or the server went away, the statement may not have run. */
const TRANSIENT_NODE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** Messages node-postgres raises without a code when the connection drops. */
const TRANSIENT_MESSAGES = [
  'Connection terminated unexpectedly',
  'Client has encountered a connection error',
  'Connection terminated due to connection timeout',
  'timeout expired',
];

interface ErrorFields {
  code?: string;
  message: string;
  detail?: string;
  hint?: string;
}

function fieldsOf(err: unknown): ErrorFields {
  if (typeof err !== 'object' || err === null) return { message: String(err) };
  const record = err as Record<string, unknown>;
  const text = (key: string): string | undefined => (typeof record[key] === 'string' && record[key] !== '' ? record[key] : undefined);
  return { code: text('code'), message: text('message') ?? JSON.stringify(err), detail: text('detail'), hint: text('hint') };
}

/** The error itself, then its causes and (for AggregateError) its members. */
function chain(err: unknown): unknown[] {
  const seen: unknown[] = [];
  const visit = (e: unknown): void => {
    if (e === undefined || e === null || seen.includes(e) || seen.length > 10) return;
    seen.push(e);
    if (e instanceof AggregateError) for (const inner of e.errors) visit(inner);
    if (e instanceof Error) visit(e.cause);
  };
  visit(err);
  return seen;
}

/** SQLSTATE classes start with a digit, or are F0, HV, P0, XX — so `EPIPE` is not one. */
function isSqlState(code: string | undefined): boolean {
  return code !== undefined && /^(?:[0-9][0-9A-Z]|F0|HV|P0|XX)[0-9A-Z]{3}$/.test(code);
}

export function classifyPgError(err: unknown): ErrorClass {
  for (const e of chain(err)) {
    const { code, message } = fieldsOf(e);
    if (isSqlState(code)) {
      if (code !== undefined && (TRANSIENT_SQLSTATES.has(code) || code.startsWith('08'))) return 'transient';
      return 'permanent'; // the server answered: its verdict wins over any wrapper's words
    }
    if (code !== undefined && TRANSIENT_NODE_CODES.has(code)) return 'transient';
    if (TRANSIENT_MESSAGES.some((m) => message.startsWith(m))) return 'transient';
  }
  return 'permanent';
}

/** 55P03: our lock_timeout (or a NOWAIT lock) gave up waiting — a stop condition, not a bug. */
export function isLockTimeout(err: unknown): boolean {
  return chain(err).some((e) => fieldsOf(e).code === '55P03');
}

/** One line: `SQLSTATE 23505: duplicate key … — detail: Key (id)=(1) already exists.` */
export function describePgError(err: unknown): string {
  const server = chain(err)
    .map(fieldsOf)
    .find((f) => isSqlState(f.code));
  const { code, message, detail, hint } = server ?? fieldsOf(err);
  let line = code === undefined ? message : isSqlState(code) ? `SQLSTATE ${code}: ${message}` : `${code}: ${message}`;
  if (detail !== undefined) line += ` — detail: ${detail}`;
  if (hint !== undefined) line += ` — hint: ${hint}`;
  return line.replace(/\s*\n\s*/g, ' ');
}
