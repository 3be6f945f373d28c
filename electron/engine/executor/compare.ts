import type { Measures, RuleCheck } from './types.ts';

function toNumber(value: string | number | null | undefined): number {
  if (value === null || value === undefined || value === '') return 0; // sum() of no rows is NULL
  return typeof value === 'number' ? value : Number(value);
}

/**
 * Compares the columns both sides return. The difference of a column is relative,
 * |source − target| / max(|source|, 1), so a tolerance of 0.001 means 0.1 %.
 */
export function compareMeasures(rule: string, source: Measures, target: Measures, tolerance: number): RuleCheck {
  const common = Object.keys(source).filter((k) => k in target);
  if (common.length === 0) {
    return { rule, source, target, diffRatio: Number.POSITIVE_INFINITY, tolerance, ok: false };
  }
  let diffRatio = 0;
  for (const column of common) {
    const s = toNumber(source[column]);
    const t = toNumber(target[column]);
    const diff = Number.isNaN(s) || Number.isNaN(t) ? Number.POSITIVE_INFINITY : Math.abs(s - t) / Math.max(Math.abs(s), 1);
    diffRatio = Math.max(diffRatio, diff);
  }
  return { rule, source, target, diffRatio, tolerance, ok: diffRatio <= tolerance };
}

export function describeCheck(check: RuleCheck): string {
  const cols = Object.keys(check.source).filter((k) => k in check.target);
  if (cols.length === 0) {
    return `rule "${check.rule}": source returns (${Object.keys(check.source).join(', ')}) and target returns (${Object.keys(check.target).join(', ')}): no column in common to compare`;
  }
  const parts = cols.map((c) => `${c} ${String(check.source[c])} vs ${String(check.target[c])}`);
  return `rule "${check.rule}": ${parts.join(', ')} (diff ${(check.diffRatio * 100).toFixed(4)}% > tolerance ${(check.tolerance * 100).toFixed(4)}%)`;
}
