/**
 * The benchmark statistic that holds on a busy, shared machine: the thing measured and its
 * baseline run in interleaved pairs (order alternating, so neither always runs second), each
 * pair gives one ratio, and the result is the median of those ratios with a distribution-free
 * 95% confidence interval. A slow spell of the machine meets both halves of a pair, or spoils
 * one ratio of many — it no longer moves the result. Pairs are added until the interval is
 * within ±`precision` of the median (so two runs of the bench agree within a few percent), or
 * `maxPairs` is reached, which the result then says.
 */

export interface PairedMeasure {
  /** the thing measured, in ms */
  subject: () => Promise<number>;
  /** its baseline, in ms */
  baseline: () => Promise<number>;
  /** per-pair statistic; default subject ÷ baseline */
  stat?: (subjectMs: number, baselineMs: number) => number;
  minPairs?: number;
  maxPairs?: number;
  /** half-width of the 95% interval, relative to the median, at which to stop (default 0.02) */
  precision?: number;
  /** called after each pair (progress, extra passes measured beside) */
  onPair?: (index: number, subjectMs: number, baselineMs: number) => Promise<void> | void;
}

export interface PairedResult {
  median: number;
  /** the 95% interval of the median */
  low: number;
  high: number;
  pairs: number;
  /** the interval reached ±precision of the median */
  converged: boolean;
  values: number[];
  subjectMs: number[];
  baselineMs: number[];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length / 2;
  if (sorted.length === 0) return Number.NaN;
  return Number.isInteger(mid) ? ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2 : (sorted[Math.floor(mid)] ?? Number.NaN);
}

/**
 * The order-statistic interval of the median: ranks n/2 ∓ 0.98·√n (the normal approximation of
 * the binomial, 1.96/2), clamped to the sample. Needs no assumption about the distribution.
 */
export function medianInterval(values: readonly number[]): { low: number; high: number } {
  const sorted = [...values].sort((x, y) => x - y);
  const n = sorted.length;
  const spread = 0.98 * Math.sqrt(n);
  const lo = Math.max(0, Math.floor(n / 2 - spread));
  const hi = Math.min(n - 1, Math.ceil(n / 2 + spread) - 1);
  return { low: sorted[lo] ?? Number.NaN, high: sorted[hi] ?? Number.NaN };
}

export async function measurePairs(m: PairedMeasure): Promise<PairedResult> {
  const minPairs = m.minPairs ?? 8;
  const maxPairs = Math.max(minPairs, m.maxPairs ?? 40);
  const precision = m.precision ?? 0.02;
  const stat = m.stat ?? ((s, b) => s / b);
  const values: number[] = [];
  const subjectMs: number[] = [];
  const baselineMs: number[] = [];
  let converged = false;
  for (let i = 0; i < maxPairs; i++) {
    let s: number;
    let b: number;
    if (i % 2 === 0) {
      b = await m.baseline();
      s = await m.subject();
    } else {
      s = await m.subject();
      b = await m.baseline();
    }
    subjectMs.push(s);
    baselineMs.push(b);
    values.push(stat(s, b));
    await m.onPair?.(i, s, b);
    if (values.length >= minPairs) {
      const mid = median(values);
      const { low, high } = medianInterval(values);
      if (Math.max(mid - low, high - mid) <= precision * Math.abs(mid)) {
        converged = true;
        break;
      }
    }
  }
  return { median: median(values), ...medianInterval(values), pairs: values.length, converged, values, subjectMs, baselineMs };
}

/** `median 1.045 (95% CI 1.031–1.060, 14 pairs)`, with a warning when it did not settle. */
export function describePairs(r: PairedResult, digits = 3, what = 'ratios'): string {
  const f = (x: number) => x.toFixed(digits);
  return `median of ${r.pairs} paired ${what} ${f(r.median)} (95% CI ${f(r.low)}–${f(r.high)}${r.converged ? '' : `; NOT within the precision asked after ${r.pairs} pairs: the machine is noisy, compare with care`})`;
}
