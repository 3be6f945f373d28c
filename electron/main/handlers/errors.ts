/**
 * Errors as the renderer sees them: `{ message, code, hint?, field?, reasons? }`, each saying
 * what to do next. Messages pass through `redact` so no password leaves main inside one.
 */
import type { z } from 'zod';
import type { CallError } from '../../../shared/contract.ts';
import { classifyError } from '../../engine/classifyError.ts';

/** The classifier's decision (the CLI's exit code comes from the same one), with every text redacted. */
export function toCallError(err: unknown, redact: (text: string) => string = (t) => t): CallError {
  const f = classifyError(err);
  const out: CallError = { code: f.kind, message: redact(f.message) };
  if (f.hint !== undefined) out.hint = redact(f.hint);
  if (f.field !== undefined) out.field = f.field;
  if (f.reasons !== undefined && f.reasons.length > 0) out.reasons = f.reasons.map(redact);
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
