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

interface Frame {
  value: object;
  parent: Frame | null;
  key: string;
  array: boolean;
}

/** "plan.range.from", "items[3]"; built only for a message. */
function pathOf(frame: Frame | null, key: string | null): string {
  const parts: string[] = [];
  const push = (k: string, inArray: boolean) => parts.unshift(inArray ? `[${k}]` : parts.length === 0 ? k : `${k}.`);
  if (key !== null && frame) push(key, frame.array);
  for (let f = frame; f && f.parent; f = f.parent) push(f.key, f.parent.array);
  const text = parts.join('').replace(/\.\[/g, '[').replace(/\.$/, '');
  return text === '' ? '(the input)' : text;
}

/** JSON characters of a primitive; a string naming what it is when it is not JSON data. */
function primitiveChars(v: unknown): number | string {
  if (v === null || v === undefined || typeof v === 'boolean') return 5;
  if (typeof v === 'number') return Number.isFinite(v) ? String(v).length : 4;
  if (typeof v === 'string') return v.length + 2;
  return `is a ${typeof v}, not JSON data`;
}

/** Roughly JSON.stringify(value).length (strings counted without escapes), cut off past `limit`. */
export function measureInput(value: unknown, limit: number = LIMITS.ipcInputChars): InputSize {
  let total = 0;
  let largest: { frame: Frame | null; key: string | null; chars: number } = { frame: null, key: null, chars: 0 };
  const over = (): InputSize => ({
    ok: false,
    reason: 'too-large',
    chars: total,
    field: pathOf(largest.frame, largest.key),
    fieldChars: largest.chars,
  });
  if (value === null || typeof value !== 'object') {
    const chars = primitiveChars(value);
    if (typeof chars === 'string') return { ok: false, reason: 'not-data', field: '(the input)', what: chars };
    total = chars;
    largest = { frame: null, key: null, chars };
    return total > limit ? over() : { ok: true, chars: total };
  }
  const seen = new Set<object>();
  // Depth-first with an explicit stack: a deeply nested input must not overflow main's stack.
  const stack: Frame[] = [{ value, parent: null, key: '', array: Array.isArray(value) }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (seen.has(frame.value))
      return { ok: false, reason: 'not-data', field: pathOf(frame.parent, frame.key), what: 'refers back to itself (a cycle)' };
    seen.add(frame.value);
    // **Hazard**: not for…in over an array: V8 builds the whole key list first, which for an
    // array of ten million items is seconds of main-process time before the first check.
    const keys = frame.array ? null : Object.keys(frame.value);
    const count = keys ? keys.length : (frame.value as unknown[]).length;
    let chars = 2;
    for (let i = 0; i < count; i++) {
      const key = keys ? (keys[i] as string) : null;
      const inner: unknown = key !== null ? (frame.value as Record<string, unknown>)[key] : (frame.value as unknown[])[i];
      chars += key !== null ? key.length + 4 : 1;
      if (inner !== null && typeof inner === 'object') {
        stack.push({ value: inner, parent: frame, key: key ?? String(i), array: Array.isArray(inner) });
      } else {
        const size = primitiveChars(inner);
        if (typeof size === 'string') return { ok: false, reason: 'not-data', field: pathOf(frame, key ?? String(i)), what: size };
        chars += size;
        if (size > largest.chars) largest = { frame, key: key ?? String(i), chars: size };
      }
      if (total + chars > limit) {
        // One value that is most of the input is what to name; else the list or mapping being read.
        if (largest.chars <= limit / 2) largest = { frame: frame.parent, key: frame.parent ? frame.key : null, chars };
        total += chars;
        return over();
      }
    }
    total += chars;
  }
  return { ok: true, chars: total };
}
