/**
 * The dry run's questions, per partition (source article 004, "Dry run에서 확인할 것", and 003's
 * "fix the code first"): is a partition abnormally large or small, is its source still there,
 * is it past the personal-data retention, is it closed for overwriting, was it published by the
 * very code about to run again. Pure: the dry run, the execution gate and the views all ask here.
 *
 * Severity follows the tier (block for manual, warn otherwise) except where the question says:
 * a source that is gone blocks in every tier unless the plan accepts it for that partition;
 * retention always blocks; a closed partition blocks unless the plan lists it (and then a lead
 * must sign off whatever the tier).
 */
import { instantOf, type Partition } from './partitions.ts';
import type { RedFlag } from './redFlags.ts';
import { humanDuration, localHhmm, type RunEstimate } from './runEstimate.ts';
import type { Job, Plan } from './schemas.ts';
import type { Tier } from './tier.ts';

export type PartitionFlagCode = 'abnormal-size' | 'source-gone' | 'retention' | 'closed-partition' | 'same-code';

export interface PartitionFlag {
  key: string;
  code: PartitionFlagCode;
  severity: 'block' | 'warn';
  /** what was measured, in words */
  detail: string;
  /** why it does not block: the plan's acceptance or acknowledgement, quoted */
  accepted?: string;
}

export const SIZE_DEFAULTS = { neighbourRatio: 3, targetRatio: 3, minRows: 10, neighbours: 3 } as const;
export const GONE_DEFAULTS = { minRatio: 0.5 } as const;

export interface MeasuredPartition {
  key: string;
  /** rows the run would write (the source's `rows`, or `records` for S3) */
  sourceRows: number | null;
  /** rows the target partition holds now */
  targetRows: number | null;
}

export interface PartitionQuestions {
  tier: Tier;
  plan: Plan;
  job: Job;
  partitions: readonly Partition[];
  /** the dry run's measures; absent, the size and source questions are not asked */
  measured?: readonly MeasuredPartition[];
  /** closed partition key → why (job and workspace closed_partitions) */
  closed?: ReadonlyMap<string, string>;
  /** partition key → the run that last published it and the job version that run used */
  publishedBy?: ReadonlyMap<string, { runId: string; jobHash: string | null }>;
  jobHash?: string;
  now: Date;
}

const strict = (tier: Tier): 'block' | 'warn' => (tier === 'manual' ? 'block' : 'warn');

/** The plan's acknowledgement of a flag for a partition (or for the whole run), if any. */
export function acknowledgement(plan: Plan, code: 'abnormal-size' | 'peak-overlap' | 'same-code', key?: string): string | undefined {
  const ack = plan.acknowledge?.find((a) => a.flag === code && (key === undefined || !a.partitions || a.partitions.includes(key)));
  return ack ? `acknowledged in the plan: ${ack.reason}` : undefined;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const times = (a: number, b: number) => (b === 0 ? '∞' : (a / b).toFixed(1));

/** Partitions older than the retention: their start is before now − days. */
export function pastRetention(job: Job, partitions: readonly Partition[], now: Date): string[] {
  if (!job.retention) return [];
  const cutoff = now.getTime() - job.retention.days * 86_400_000;
  return partitions.filter((p) => instantOf(p.start) < cutoff).map((p) => p.key);
}

/** Every flag of every partition, in partition order. */
export function partitionFlags(q: PartitionQuestions): PartitionFlag[] {
  const { plan, job, tier } = q;
  const flags: PartitionFlag[] = [];
  const add = (f: PartitionFlag) => flags.push(f);
  const gone = new Set<string>();

  const limits = job.red_flags?.source_gone;
  const goneRatio = limits?.min_ratio ?? GONE_DEFAULTS.minRatio;
  for (const m of q.measured ?? []) {
    const s = m.sourceRows ?? 0;
    const t = m.targetRows ?? 0;
    if (t > 0 && s < t * goneRatio) {
      gone.add(m.key);
      const accepted = plan.accept_purged?.includes(m.key);
      add({
        key: m.key,
        code: 'source-gone',
        severity: accepted ? 'warn' : 'block',
        detail:
          s === 0
            ? `the source has no rows for it, the target holds ${t}: overwriting deletes them all, and the source cannot give them back`
            : `the source gives back ${s} rows, the target holds ${t} (under ${goneRatio * 100}%): overwriting deletes ${t - s} the source no longer has`,
        ...(accepted ? { accepted: "listed in the plan's accept_purged: its rows will be deleted" } : {}),
      });
    }
  }

  const size = job.red_flags?.abnormal_size;
  const neighbourRatio = size?.neighbour_ratio ?? SIZE_DEFAULTS.neighbourRatio;
  const targetRatio = size?.target_ratio ?? SIZE_DEFAULTS.targetRatio;
  const minRows = size?.min_rows ?? SIZE_DEFAULTS.minRows;
  const measured = q.measured ?? [];
  measured.forEach((m, i) => {
    if (gone.has(m.key) || m.sourceRows === null) return;
    const p = m.sourceRows;
    const reasons: string[] = [];
    // Neighbours whose own source is gone are no yardstick: a purged stretch would make its
    // healthy neighbours look huge.
    const around = measured
      .slice(Math.max(0, i - SIZE_DEFAULTS.neighbours), i + SIZE_DEFAULTS.neighbours + 1)
      .filter((n) => n !== m && !gone.has(n.key) && n.sourceRows !== null)
      .map((n) => n.sourceRows ?? 0);
    const med = median(around);
    if (med !== null && Math.max(p, med) >= minRows && (p > med * neighbourRatio || p * neighbourRatio < med))
      reasons.push(`predicted ${p} rows where its neighbours predict about ${med} (×${times(p, med)}, limit ${neighbourRatio})`);
    const t = m.targetRows ?? 0;
    if (t > 0 && Math.max(p, t) >= minRows && p > t * targetRatio)
      reasons.push(`predicted ${p} rows where the target holds ${t} now (×${times(p, t)}, limit ${targetRatio})`);
    if (reasons.length === 0) return;
    const ack = acknowledgement(plan, 'abnormal-size', m.key);
    add({
      key: m.key,
      code: 'abnormal-size',
      severity: ack ? 'warn' : strict(tier),
      detail: reasons.join('; '),
      ...(ack ? { accepted: ack } : {}),
    });
  });

  if (job.retention) {
    const { days, reason } = job.retention;
    for (const key of pastRetention(job, q.partitions, q.now))
      add({
        key,
        code: 'retention',
        severity: 'block',
        detail: `older than the job's ${days}-day retention (${reason}): recomputing it would restore data deleted on purpose`,
      });
  }

  for (const [key, why] of q.closed ?? []) {
    const listed = plan.overwrite_closed?.includes(key);
    add({
      key,
      code: 'closed-partition',
      severity: listed ? 'warn' : 'block',
      detail: `closed: ${why}`,
      ...(listed ? { accepted: "listed in the plan's overwrite_closed: a lead must sign off, whatever the tier" } : {}),
    });
  }

  for (const [key, by] of q.publishedBy ?? []) {
    if (q.jobHash === undefined || by.jobHash !== q.jobHash || by.runId === plan.request_id) continue;
    const ack = acknowledgement(plan, 'same-code', key);
    add({
      key,
      code: 'same-code',
      severity: ack ? 'warn' : strict(tier),
      detail: `published by run ${by.runId} with this very job version (${q.jobHash.slice(0, 12)}…): the fix may not be in yet — fix the code first`,
      ...(ack ? { accepted: ack } : {}),
    });
  }

  const order = new Map(q.partitions.map((p, i) => [p.key, i]));
  return flags.sort((a, b) => (order.get(a.key) ?? 0) - (order.get(b.key) ?? 0));
}

const HEADLINE: Record<PartitionFlagCode, (n: number, keys: string) => string> = {
  'abnormal-size': (n, k) => `${n} partition(s) with an abnormal predicted size: ${k}`,
  'source-gone': (n, k) =>
    `${n} partition(s) whose source is no longer there: ${k} — overwriting would delete data the source cannot give back; list them in the plan's accept_purged to delete them on purpose`,
  retention: (n, k) => `${n} partition(s) past the job's personal-data retention: ${k} — they are refused`,
  'closed-partition': (n, k) =>
    `${n} closed partition(s): ${k} — list them in the plan's overwrite_closed to overwrite them (a lead then signs off)`,
  'same-code': (n, k) =>
    `${n} partition(s) were published by this very job version: ${k} — the fix may not be in yet: fix the code first, or acknowledge it in the plan`,
};

/** One red flag per question and severity, naming its partitions (up to 12, then a count). */
export function summarizePartitionFlags(flags: readonly PartitionFlag[]): RedFlag[] {
  const groups = new Map<string, PartitionFlag[]>();
  for (const f of flags) {
    const id = `${f.code}|${f.severity}`;
    groups.set(id, [...(groups.get(id) ?? []), f]);
  }
  return [...groups.values()].map((group) => {
    const first = group[0] as PartitionFlag;
    const keys = group.map((f) => f.key);
    const shown = keys.length > 12 ? `${keys.slice(0, 12).join(', ')} and ${keys.length - 12} more` : keys.join(', ');
    const accepted = first.accepted ? ` (${first.accepted})` : '';
    return {
      code: first.code,
      severity: first.severity,
      message: `${HEADLINE[first.code](keys.length, shown)}${accepted}`,
      partitions: keys,
    };
  });
}

/** Plan lists that name partitions must name partitions of the range: a typo would accept nothing. */
export function planListProblem(plan: Plan, partitions: readonly Partition[]): { field: string; value: string } | null {
  const keys = new Set(partitions.map((p) => p.key));
  const lists: [string, readonly string[] | undefined][] = [
    ['accept_purged', plan.accept_purged],
    ['overwrite_closed', plan.overwrite_closed],
    ...(plan.acknowledge ?? []).map((a, i): [string, readonly string[] | undefined] => [`acknowledge[${i}].partitions`, a.partitions]),
  ];
  for (const [field, list] of lists) {
    const stray = list?.find((k) => !keys.has(k));
    if (stray !== undefined) return { field, value: stray };
  }
  return null;
}

/** Peak overlap: the run, as estimated, would reach the plan's no-run window before it finishes. */
export function peakOverlapFlag(estimate: RunEstimate | null, plan: Plan, tier: Tier, timeZone: string): RedFlag | null {
  const w = estimate?.window;
  if (!estimate || !w || estimate.entersWindowAt === null) return null;
  const zone = w.timezone ?? timeZone;
  const at = new Date(estimate.entersWindowAt);
  const atStart = estimate.entersWindowAt === estimate.startsAt;
  const ack = acknowledgement(plan, 'peak-overlap');
  const eta = `about ${humanDuration(estimate.ms)} for ${estimate.partitions} partition(s)`;
  const message = atStart
    ? `the run would start inside the no-run window ${w.from}–${w.to} (${zone}, now ${localHhmm(at, zone)}); it takes ${eta}: start it after ${w.to}`
    : `the run takes ${eta} and would reach the no-run window ${w.from}–${w.to} (${zone}) at ${localHhmm(at, zone)}, before it finishes: start earlier, raise the concurrency, shorten the pause or narrow the range`;
  return {
    code: 'peak-overlap',
    severity: ack ? 'warn' : strict(tier),
    field: 'stop.no_run_window',
    message: ack ? `${message} (${ack})` : message,
  };
}
