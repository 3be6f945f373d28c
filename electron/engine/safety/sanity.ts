/**
 * The source sanity gate: is the source itself healthy before anything is recomputed from it?
 * A pipeline "fixed" and rerun on a still-contaminated source produces the same wrong result.
 * Each rule gives a value and its threshold; a failing `fail` rule blocks the run (exit 4).
 */
import { checkJobSql } from '../sql/jobSql.ts';
import type { Partition } from '../../../shared/partitions.ts';
import { partitionRange } from '../../../shared/partitions.ts';
import type { Config, QualityRule, Unit } from '../../../shared/schemas.ts';
import { assertNever } from '../../../shared/errors.ts';
import type { PreparedPlan } from '../runbook/prepare.ts';
import { postgresEndpoint } from '../runbook/prepare.ts';
import type { Store } from '../store/index.ts';
import { PostgresQualityProbe, type Bounds } from '../targets/postgres/quality.ts';
import { shiftBoundary } from './window.ts';

export interface SanityResult {
  rule: string;
  kind: QualityRule['kind'];
  severity: 'warn' | 'fail';
  /** the measured value (rate, ratio, count, minutes, custom number) */
  value: number | null;
  /** the threshold in words: "≤ 0.01", "within ×3 of the trailing median" */
  threshold: string;
  ok: boolean;
  message: string;
  /** the partitions that broke the rule, when it is per partition */
  partitions?: string[];
}

export interface SanityReport {
  results: SanityResult[];
  /** a `fail` rule did not hold */
  blocked: boolean;
  evidenceId: number;
}

export async function runSanityChecks(
  prepared: PreparedPlan,
  config: Config,
  store: Store,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SanityReport> {
  const { job, partitions } = prepared;
  await checkJobSql(job);
  const results: SanityResult[] = [];
  if (job.quality.length > 0) {
    const source = postgresEndpoint(config, job.source.connection, 'source.connection', env);
    const probe = new PostgresQualityProbe(source.connection, source.password, job.timezone);
    try {
      for (const [index, rule] of job.quality.entries()) {
        results.push(await evaluate(probe, rule, `quality[${index}]`, partitions, job.unit, job.timezone));
      }
    } finally {
      await probe.close();
    }
  }
  const blocked = results.some((r) => !r.ok && r.severity === 'fail');
  const evidence = store.evidence.add({
    runId: null,
    planHash: prepared.planHash,
    kind: 'sanity-check',
    body: { jobHash: prepared.jobHash, blocked, results },
  });
  return { results, blocked, evidenceId: evidence.id };
}

function whole(partitions: Partition[]): Bounds {
  return { start: partitions[0]?.start ?? '', end: partitions.at(-1)?.end ?? '' };
}

async function evaluate(
  probe: PostgresQualityProbe,
  rule: QualityRule,
  field: string,
  partitions: Partition[],
  unit: Unit,
  timeZone: string,
): Promise<SanityResult> {
  switch (rule.kind) {
    case 'null_rate': {
      const { rows, nulls } = await probe.nullRate(rule.table, rule.column, rule.time_column, whole(partitions), field);
      const rate = rows === 0 ? 0 : nulls / rows;
      const ok = rate <= rule.max;
      return result(
        rule,
        `null_rate(${rule.table}.${rule.column})`,
        rate,
        `≤ ${rule.max}`,
        ok,
        `${nulls} of ${rows} rows have no ${rule.column} (${pct(rate)}; allowed ${pct(rule.max)})`,
      );
    }
    case 'row_count_outlier':
      return rowCountOutliers(probe, rule, field, partitions, unit, timeZone);
    case 'timestamp_order': {
      const { rows, inverted } = await probe.inversions(rule.table, rule.before, rule.after, rule.time_column, whole(partitions), field);
      const ok = inverted <= rule.max;
      return result(
        rule,
        `timestamp_order(${rule.table}: ${rule.before} ≤ ${rule.after})`,
        inverted,
        `≤ ${rule.max} rows`,
        ok,
        `${inverted} of ${rows} rows have ${rule.after} before ${rule.before}`,
      );
    }
    case 'freshness': {
      const age = await probe.ageMinutes(rule.table, rule.time_column, field);
      const ok = age !== null && age <= rule.max_age_minutes;
      const text = age === null ? `${rule.table} is empty` : `newest ${rule.time_column} is ${Math.round(age)} minutes old`;
      return result(rule, `freshness(${rule.table}.${rule.time_column})`, age, `≤ ${rule.max_age_minutes} min`, ok, text);
    }
    case 'custom_sql': {
      const value = await probe.scalar(rule.sql, whole(partitions), `${field}.sql`);
      const ok = value !== null && (rule.min === undefined || value >= rule.min) && (rule.max === undefined || value <= rule.max);
      const bounds = [rule.min !== undefined ? `≥ ${rule.min}` : '', rule.max !== undefined ? `≤ ${rule.max}` : '']
        .filter(Boolean)
        .join(' and ');
      return result(rule, rule.name, value, bounds, ok, value === null ? 'the query returned no value' : `value ${value}`);
    }
    default:
      return assertNever(rule, 'quality rule');
  }
}

/**
 * Each partition's row count against the median of the `window` partitions before it (the
 * window reaches back before the range). Outliers both ways: a spike, or a dropped day.
 */
async function rowCountOutliers(
  probe: PostgresQualityProbe,
  rule: Extract<QualityRule, { kind: 'row_count_outlier' }>,
  field: string,
  partitions: Partition[],
  unit: Unit,
  timeZone: string,
): Promise<SanityResult> {
  const first = partitions[0];
  const history = first ? partitionRange({ from: shiftBoundary(first.key, unit, -rule.window), to: first.key }, unit, timeZone) : [];
  const all = [...history, ...partitions];
  const counts = await probe.counts(rule.table, rule.time_column, all, field);
  const offenders: { key: string; count: number; median: number; ratio: number }[] = [];
  let worst = 1;
  for (let i = history.length; i < all.length; i++) {
    const trailing = counts.slice(Math.max(0, i - rule.window), i);
    const median = medianOf(trailing);
    const count = counts[i] ?? 0;
    if (median === 0) continue; // no baseline to compare with
    const ratio = count / median;
    const distance = ratio === 0 ? Number.POSITIVE_INFINITY : Math.max(ratio, 1 / ratio);
    if (distance > Math.max(worst, 1 / worst)) worst = ratio;
    if (distance > rule.max_ratio) offenders.push({ key: all[i]?.key ?? '?', count, median, ratio });
  }
  const ok = offenders.length === 0;
  const list = offenders
    .slice(0, 5)
    .map((o) => `${o.key}: ${o.count} rows vs median ${o.median} (×${o.ratio.toFixed(2)})`)
    .join('; ');
  const message = ok
    ? `every partition within ×${rule.max_ratio} of its trailing ${rule.window}-partition median`
    : `${offenders.length} outlier partition(s): ${list}${offenders.length > 5 ? '; …' : ''}`;
  return {
    ...result(rule, `row_count_outlier(${rule.table})`, round(worst), `within ×${rule.max_ratio} of the trailing median`, ok, message),
    partitions: offenders.map((o) => o.key),
  };
}

function result(rule: QualityRule, name: string, value: number | null, threshold: string, ok: boolean, message: string): SanityResult {
  return { rule: name, kind: rule.kind, severity: rule.severity, value: value === null ? null : round(value), threshold, ok, message };
}

export function medianOf(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const round = (n: number): number => Math.round(n * 1e6) / 1e6;
const pct = (n: number): string => `${(n * 100).toFixed(2)}%`;
