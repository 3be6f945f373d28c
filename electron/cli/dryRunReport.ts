/** The dry run's answers for the terminal: red flags per partition, the ETA, and the impact scope as a tree. */
import type { CanaryBody, CanaryMeasures } from '../../shared/canary.ts';
import { describeImpact, impactTree, type ImpactGraph } from '../../shared/impact.ts';
import { describeKeyChange, describeMeasure } from '../../shared/keyChange.ts';
import type { PartitionFlag } from '../../shared/partitionFlags.ts';
import type { RedFlag } from '../../shared/redFlags.ts';
import { humanDuration, type RunEstimate } from '../../shared/runEstimate.ts';

/** The dry run's own questions (the plan's flags are listed with the plan above them). */
export function formatFlags(flags: readonly RedFlag[]): string {
  if (flags.length === 0)
    return "The dry run's questions: none raised — size, source, retention, closed partitions, peak hours and code version all clear.";
  return ["The dry run's questions:", ...flags.map((f) => `  ${f.severity === 'block' ? 'BLOCK' : 'warn '} ${f.code}: ${f.message}`)].join(
    '\n',
  );
}

/** `2026-05-03: BLOCK source-gone — the source has no rows …` for every flagged partition. */
export function formatPartitionFlags(flags: readonly PartitionFlag[]): string {
  if (flags.length === 0) return '';
  return [
    'Per partition:',
    ...flags.map(
      (f) => `  ${f.key}  ${f.severity === 'block' ? 'BLOCK' : 'warn '} ${f.code}: ${f.detail}${f.accepted ? ` (${f.accepted})` : ''}`,
    ),
  ].join('\n');
}

export function formatEstimate(e: RunEstimate | null): string {
  if (!e) return 'ETA: nothing left to write.';
  const window = e.window
    ? e.entersWindowAt
      ? `; it would reach the no-run window ${e.window.from}–${e.window.to} at ${e.entersWindowAt}`
      : `; clear of the no-run window ${e.window.from}–${e.window.to}`
    : '; no no-run window in the plan';
  return `ETA: about ${humanDuration(e.ms)} if started now (done by ${e.endsAt})${window}. Estimated from ${e.basis}.`;
}

/** The graph as an indented tree from the target, each node with what it is and why it is affected. */
export function formatImpact(graph: ImpactGraph): string {
  return [
    `Impact scope: ${describeImpact(graph)}`,
    ...impactTree(graph).map((l) => `  ${l}`),
    ...graph.problems.map((p) => `  (not looked at: ${p})`),
  ].join('\n');
}

const shown = (m: CanaryMeasures | null, k: string) => (m === null ? '–' : String(m[k] ?? '–'));

/** The canary's partitions before → after: by key against the snapshot, else rows and sums. */
export function formatCanary(body: CanaryBody): string {
  const lines = [`Canary: ${body.size} partition(s) written, reconciled with the source and compared with what they held before:`];
  for (const p of body.partitions) {
    if (p.keys) {
      lines.push(`  ${p.key} (against the snapshot, by key): ${describeKeyChange(p.keys)}`);
      for (const m of p.keys.measures) lines.push(`      ${describeMeasure(m)}`);
      continue;
    }
    const columns = [...new Set([...Object.keys(p.before ?? {}), ...Object.keys(p.after)])].filter((c) => c !== 'published_by');
    lines.push(
      `  ${p.key} (against the ${p.basis}): ${columns.map((c) => `${c} ${shown(p.before, c)} → ${shown(p.after, c)}`).join(', ')}`,
    );
  }
  return lines.join('\n');
}
