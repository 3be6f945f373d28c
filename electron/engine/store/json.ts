import { createHash } from 'node:crypto';
import { StoreError } from './errors.ts';

/**
 * JSON with object keys sorted at every level, so equal values store as equal text and hash
 * alike. (Not full RFC 8785: numbers keep JavaScript's formatting, which is what we wrote.)
 */
export function canonicalJson(value: unknown, what = 'value'): string {
  const text = JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    const source = inner as Record<string, unknown>;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(source).sort()) sorted[key] = source[key];
    return sorted;
  }) as string | undefined;
  if (text === undefined) throw new StoreError(`${what} cannot be stored as JSON (got ${typeof value})`, 'invalid');
  return text;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function parseJson(text: string): unknown {
  return JSON.parse(text) as unknown;
}

export function parseJsonObject(text: string): Record<string, unknown> {
  const value = parseJson(text);
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
