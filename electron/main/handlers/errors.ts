/**
 * Errors as the renderer sees them: `{ message, code, hint?, field?, reasons? }`, each saying
 * what to do next. Messages pass through `redact` so no password leaves main inside one.
 */
import type { z } from 'zod';
import type { CallError } from '../../../shared/contract.ts';
import { GateError, InputError } from '../../../shared/errors.ts';
import { StoreError } from '../../engine/store/index.ts';
import { ServiceError } from '../../engine/runbook/secrets.ts';

export function toCallError(err: unknown, redact: (text: string) => string = (t) => t): CallError {
  if (err instanceof InputError) {
    return clean({ code: 'input', message: redact(err.message), hint: err.details.hint, field: err.details.field }, redact);
  }
  if (err instanceof GateError) {
    return clean(
      {
        code: 'gate',
        message: redact(err.message),
        reasons: err.reasons.map(redact),
        hint: 'every reason above must be resolved before this can run',
      },
      redact,
    );
  }
  if (err instanceof ServiceError) return clean({ code: err.code, message: redact(err.message), hint: err.hint }, redact);
  if (err instanceof StoreError) {
    return clean(
      { code: 'store', message: redact(err.message), hint: 'the local SQLite file could not be used; the message says why' },
      redact,
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'internal', message: redact(message), hint: 'this is unexpected: the details are in the app log' };
}

function clean(error: CallError, redact: (text: string) => string): CallError {
  const out: CallError = { code: error.code, message: error.message };
  if (error.hint !== undefined) out.hint = redact(error.hint);
  if (error.field !== undefined) out.field = error.field;
  if (error.reasons !== undefined && error.reasons.length > 0) out.reasons = error.reasons;
  return out;
}

/** The first problem of a refused input, in words; the count of the others. */
export function describeInputIssues(channel: string, issues: readonly z.core.$ZodIssue[]): CallError {
  const first = issues[0];
  if (!first) return { code: 'input', message: `${channel}: the input was refused` };
  const field = first.path.map(String).join('.');
  const what =
    first.code === 'unrecognized_keys'
      ? `unknown field${first.keys.length > 1 ? 's' : ''} ${first.keys.map((k) => `"${[...first.path.map(String), k].join('.')}"`).join(', ')}`
      : `${field === '' ? 'the input' : `field "${field}"`}: ${first.message}`;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return { code: 'input', message: `${channel}: ${what}${more}`, ...(field === '' ? {} : { field }) };
}
