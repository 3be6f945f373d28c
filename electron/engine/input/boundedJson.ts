/**
 * JSON from a file or a paste, parsed and then refused when it nests deeper than any file of
 * ours does. **Hazard**: JSON.parse itself copes with deep nesting, but everything after it
 * that walks the value recursively (canonical JSON, zod, the manifest) would overflow the stack
 * on `[[[[…]]]]` and die with a RangeError instead of a message.
 */
import { InputError } from '../../../shared/errors.ts';
import { LIMITS, overLimitError } from '../../../shared/limits.ts';

export interface JsonSource {
  file: string;
  /** What the text should be, for messages: "note bundle", "sign-off signature file". */
  what: string;
  maxDepth?: number;
}

export function parseBoundedJson(text: string, source: JsonSource): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InputError(`${source.file} is not a ${source.what} (not JSON: ${err instanceof Error ? err.message : String(err)})`, {
      file: source.file,
    });
  }
  const limit = source.maxDepth ?? LIMITS.jsonDepth;
  const deepest = depthOver(value, limit);
  if (deepest !== null)
    throw overLimitError({
      file: source.file,
      field: deepest.path,
      what: `nesting of the ${source.what}`,
      size: deepest.depth,
      atLeast: true,
      limit,
      unit: 'levels',
    });
  return value;
}

/** The first place nested deeper than `limit`, found without recursion; null when none is. */
export function depthOver(value: unknown, limit: number): { depth: number; path: string } | null {
  interface Frame {
    value: object;
    depth: number;
    key: string;
    parent: Frame | null;
  }
  const pathOf = (frame: Frame): string => {
    const keys: string[] = [];
    for (let f: Frame | null = frame; f && f.parent; f = f.parent) keys.unshift(f.key);
    return keys.join('.') || '(top level)';
  };
  if (value === null || typeof value !== 'object') return null;
  const stack: Frame[] = [{ value, depth: 1, key: '', parent: null }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (frame.depth > limit) return { depth: frame.depth, path: pathOf(frame) };
    const container = frame.value as Record<string, unknown>;
    for (const key in container) {
      const inner = container[key];
      if (inner !== null && typeof inner === 'object') stack.push({ value: inner, depth: frame.depth + 1, key, parent: frame });
    }
  }
  return null;
}
