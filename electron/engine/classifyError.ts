/**
 * The one decision about what an error is (STYLE 14): its kind, its message, and what to do
 * next. The CLI renders the kind as an exit code (electron/cli/exitCodes.ts), the app as the
 * error kind of a failed call (electron/main/handlers/errors.ts), so an error has the same
 * kind, message and hint in both.
 */
import type { ErrorCode } from '../../shared/contract.ts';
import { ConnectionError, GateError, InputError } from '../../shared/errors.ts';
import { ServiceError } from './runbook/secrets.ts';
import { StoreError } from './store/errors.ts';

export type ErrorKind = Exclude<ErrorCode, 'untrusted-sender'>;

export interface Failure {
  kind: ErrorKind;
  message: string;
  /** what to do next */
  hint?: string;
  file?: string;
  field?: string;
  /** each reason a gate refused */
  reasons?: string[];
}

const HINTS: Partial<Record<ErrorKind, string>> = {
  gate: 'every reason above must be resolved before this can run',
  store: 'the local SQLite file could not be used; the message says why',
  connection: 'start the server or fix the connection (url, password, network); nothing was changed',
  internal: 'this is unexpected: the details are in the app log',
};

/**
 * Socket and server codes that mean "the server is gone or cannot be reached", wherever in an
 * error's cause chain they sit: a connection lost mid-statement is the same problem as one
 * refused at the start. SQLSTATE class 08 is connection_exception; 57P01–57P03 a server that is
 * shutting down or starting.
 */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);
const UNREACHABLE_MESSAGES = ['Connection terminated unexpectedly', 'Connection terminated due to connection timeout'];

function causes(err: unknown): unknown[] {
  const seen: unknown[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && !seen.includes(e) && seen.length < 10; e = (e as { cause?: unknown }).cause)
    seen.push(e);
  return seen;
}

function unreachable(err: unknown): boolean {
  return causes(err).some((e) => {
    if (e instanceof ConnectionError) return true;
    const { code, message } = (typeof e === 'object' && e !== null ? e : {}) as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code))) return true;
    return typeof message === 'string' && UNREACHABLE_MESSAGES.some((m) => message.startsWith(m));
  });
}

function withHint(kind: ErrorKind, message: string, hint?: string): Failure {
  const h = hint ?? HINTS[kind];
  return h === undefined ? { kind, message } : { kind, message, hint: h };
}

export function classifyError(err: unknown): Failure {
  if (err instanceof InputError) {
    const { file, field, hint } = err.details;
    return { ...withHint('input', err.message, hint), ...(file ? { file } : {}), ...(field ? { field } : {}) };
  }
  if (err instanceof GateError) return { ...withHint('gate', err.message), reasons: err.reasons };
  if (err instanceof ServiceError) return withHint(err.code, err.message, err.hint);
  if (err instanceof StoreError) return withHint('store', err.message);
  const message = err instanceof Error ? err.message : String(err);
  if (unreachable(err)) return withHint('connection', message);
  return withHint('internal', message);
}
