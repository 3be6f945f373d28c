/**
 * The size of one call's input, measured before zod sees it, as the JSON characters it would
 * take — without building that JSON, and stopping as soon as the limit is passed, so a
 * 500 MB string costs no more to refuse than a small one. Shared by Electron's IPC and browser
 * mode: both register through handle() in ipc.ts. (The browser-mode HTTP server also caps the
 * request body before it parses anything.)
 */
import { LIMITS } from '../../../shared/limits.ts';

export type InputSize =
  | { ok: true; chars: number }
  | { ok: false; reason: 'too-large'; chars: number; field: string; fieldChars: number }
  | { ok: false; reason: 'not-data'; field: string; what: string };

/** Roughly JSON.stringify(value).length (strings counted without escapes), cut off past `limit`. */
export function measureInput(value: unknown, limit: number = LIMITS.ipcInputChars): InputSize {
  let total = 0;
  let largest = { field: '(the input)', chars: 0 };
  const seen = new Set<object>();
  const over = (field: string, chars: number): InputSize => {
    if (chars > largest.chars) largest = { field, chars };
    return { ok: false, reason: 'too-large', chars: total + chars, field: largest.field, fieldChars: largest.chars };
  };
  // Depth-first with an explicit stack: a deeply nested input must not overflow main's stack.
  const stack: { value: unknown; field: string }[] = [{ value, field: '(the input)' }];
  while (stack.length > 0) {
    const { value: v, field } = stack.pop() as { value: unknown; field: string };
    let chars: number;
    if (v === null || v === undefined || typeof v === 'boolean') chars = 5;
    else if (typeof v === 'number') chars = Number.isFinite(v) ? String(v).length : 4;
    else if (typeof v === 'string') chars = v.length + 2;
    else if (typeof v === 'object') {
      if (seen.has(v)) return { ok: false, reason: 'not-data', field, what: 'refers back to itself (a cycle)' };
      seen.add(v);
      chars = 2;
      const array = Array.isArray(v);
      for (const key in v) {
        chars += key.length + 4;
        if (total + chars > limit) return over(field, chars);
        const inner: unknown = (v as Record<string, unknown>)[key];
        const name = field === '(the input)' ? key : array ? `${field}[${key}]` : `${field}.${key}`;
        stack.push({ value: inner, field: name });
      }
    } else {
      return { ok: false, reason: 'not-data', field, what: `is a ${typeof v}, not JSON data` };
    }
    if (total + chars > limit) return over(field, chars);
    total += chars;
    if (chars > largest.chars) largest = { field, chars };
  }
  return { ok: true, chars: total };
}
