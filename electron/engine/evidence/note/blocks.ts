/**
 * What a note section is made of. Each section module (story.ts, change.ts, comments.ts …)
 * returns blocks; the Markdown and HTML renderers know blocks, not sections, so a section is
 * added by adding a module and naming it in model.ts.
 */
import type { Block, NoteSection, Table } from '../../../../shared/noteBlocks.ts';

export type { Block, NoteSection, Table };

type Obj = Record<string, unknown>;

/** `–` for nothing, the text itself, JSON for anything else. */
export const str = (v: unknown): string =>
  v === null || v === undefined || v === ''
    ? '–'
    : typeof v === 'string'
      ? v
      : typeof v === 'number' || typeof v === 'boolean'
        ? String(v)
        : JSON.stringify(v);

export function parseBody(bodyJson: string): Obj {
  try {
    return JSON.parse(bodyJson) as Obj;
  } catch {
    return {};
  }
}

/**
 * Exceptions first, then the uniform rest summarised: the rows `isException` picks, in full,
 * then one row per group of the others (`groupOf`), built by `summarise`. A run of 61 identical
 * "published" partitions is one line, and the one that failed is the first thing read.
 */
export function exceptionsFirst<T>(
  rows: readonly T[],
  isException: (row: T) => boolean,
  render: (row: T) => string[],
  groupOf: (row: T) => string,
  summarise: (group: T[]) => string[],
): { rows: string[][]; exceptions: number; summarised: number } {
  const exceptions = rows.filter(isException);
  const groups = new Map<string, T[]>();
  for (const row of rows) if (!isException(row)) groups.set(groupOf(row), [...(groups.get(groupOf(row)) ?? []), row]);
  return {
    rows: [...exceptions.map(render), ...[...groups.values()].map((g) => (g.length === 1 ? render(g[0] as T) : summarise(g)))],
    exceptions: exceptions.length,
    summarised: rows.length - exceptions.length,
  };
}

/** "3" or "3–5": the span of numbers in a summarised group. */
export function span(values: readonly (number | null | undefined)[]): string {
  const nums = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (nums.length === 0) return '–';
  const [lo, hi] = [Math.min(...nums), Math.max(...nums)];
  return lo === hi ? String(lo) : `${lo}–${hi}`;
}

/** "58 partitions, 2026-05-01 … 2026-06-30" */
export function keysSpan(keys: readonly string[]): string {
  const sorted = [...keys].sort();
  return sorted.length === 1 ? (sorted[0] ?? '') : `${sorted.length} partitions, ${sorted[0] ?? ''} … ${sorted.at(-1) ?? ''}`;
}
