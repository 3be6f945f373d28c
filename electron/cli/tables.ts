/** Plain-text tables for the terminal: dry runs and run status. */
import { describeKeyChange, describeMeasure, totalKeyChange, type KeyChangeTotals } from '../../shared/keyChange.ts';
import { runLiveness } from '../engine/executor/liveness.ts';
import type { DryRunRow, Measures } from '../engine/executor/types.ts';
import type { PartitionRecord, Run } from '../engine/store/index.ts';
import type { SanityReport } from '../engine/safety/sanity.ts';
import type { RunMetrics } from '../engine/executor/metrics.ts';
import type { ThrottleEpisode } from '../engine/executor/throttleEpisodes.ts';

/** Columns after the first are right-aligned (numbers) unless `leftAligned` names them (text). */
export function table(header: string[], rows: string[][], leftAligned: readonly number[] = []): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const left = (i: number): boolean => i === 0 || leftAligned.includes(i);
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (left(i) ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const show = (v: Measures[string] | undefined): string => (v === null || v === undefined ? '–' : String(v));

/** `flags`: partition key → its red flag codes (`!` before a blocking one), shown in the last column. */
export function formatDryRun(rows: DryRunRow[], flags: ReadonlyMap<string, string[]> = new Map()): string {
  const columns = Object.keys(rows[0]?.source ?? { rows: 0 });
  const header = ['partition', ...columns.map((c) => `source ${c}`), ...columns.map((c) => `target ${c}`), 'row change', 'red flags'];
  const body = rows.map((r) => [
    r.partition.key,
    ...columns.map((c) => show(r.source[c])),
    ...columns.map((c) => show(r.target[c])),
    signed(r.change.rows),
    (flags.get(r.partition.key) ?? []).join(' '),
  ]);
  const totals = columns.map((c) => rows.reduce((s, r) => s + Number(r.source[c] ?? 0), 0));
  const targetTotals = columns.map((c) => rows.reduce((s, r) => s + Number(r.target[c] ?? 0), 0));
  const change = rows.reduce((s, r) => s + Number(r.change.rows ?? 0), 0);
  body.push(['total', ...totals.map(fmt), ...targetTotals.map(fmt), signed(change), '']);
  const keys = rows.flatMap((r) => (r.keys ? [r.keys] : []));
  const perPartition = table(header, body, [header.length - 1]);
  return keys.length > 0 ? `${formatKeyChange(totalKeyChange(keys, 8))}\n\n${perPartition}` : perPartition;
}

/**
 * The change by key first, as the app's Impact step leads with it: totals can stay equal while
 * keys move, and this is where that shows (`refund_amount … net 0, 1,830.00 moved between keys`).
 */
export function formatKeyChange(t: KeyChangeTotals): string {
  const lines = [`Change by key: ${describeKeyChange(t)}, in ${t.partitionsChanged} of ${t.partitions} partitions`];
  for (const m of t.measures) lines.push(`  ${describeMeasure(m)}`);
  for (const column of [...new Set(t.movers.map((m) => m.column))]) {
    const movers = t.movers.filter((m) => m.column === column).slice(0, 6);
    lines.push(
      `  moved by ${column}: ${movers
        .map(
          (m) =>
            `${m.value ?? 'NULL'} ${Object.entries(m.net)
              .map(([c, v]) => `${c} ${v.startsWith('-') ? v : `+${v}`}`)
              .join(', ')}`,
        )
        .join('; ')}`,
    );
  }
  if (t.sample.length > 0) {
    const rest = t.columns.filter((c) => !t.grain.includes(c));
    lines.push(
      '',
      table(
        ['partition', 'change', `key (${t.grain.join(', ')})`, ...rest],
        t.sample.map((s) => [
          s.partition,
          s.kind,
          s.key.map((k) => k ?? 'NULL').join(', '),
          ...rest.map((c) => {
            const i = t.columns.indexOf(c);
            const [b, a] = [s.before?.[i] ?? '–', s.after?.[i] ?? '–'];
            return b === a ? b : `${b} → ${a}`;
          }),
        ]),
      ),
    );
  }
  return lines.join('\n');
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

function signed(v: Measures[string] | undefined): string {
  const n = Number(v ?? 0);
  return n > 0 ? `+${fmt(n)}` : fmt(n);
}

export function formatRun(run: Run): string {
  const live = runLiveness(run);
  return [
    `Run ${run.runId}  [${live.state}]`,
    ...(live.hint ? [`  ${live.hint}`] : []),
    `  job ${run.jobName}, ${run.rangeFrom} → ${run.rangeTo} (${run.unit}, ${run.timezone}), ${run.writeMode}, tier ${run.tier}`,
    `  partitions: ${run.partitionsPublished}/${run.partitionsTotal} published, ${run.partitionsFailed} failed; ${run.rowsWritten} rows written; cursor ${run.cursor ?? '(done)'}`,
    `  requested by ${run.requestedBy ?? '?'}, executed by ${run.executedBy ?? '?'}; created ${run.createdAt}${run.finishedAt ? `, finished ${run.finishedAt}` : ''}`,
    ...(run.haltReason ? [`  reason: ${run.haltReason}`] : []),
  ].join('\n');
}

export function formatPartitions(partitions: PartitionRecord[]): string {
  return table(
    ['partition', 'status', 'attempt', 'rows', 'ms', 'checksum', 'error'],
    partitions.map((p) => [
      p.key,
      p.status,
      String(p.attempt),
      p.rowsWritten === null ? '–' : String(p.rowsWritten),
      p.durationMs === null ? '–' : String(p.durationMs),
      p.checksum ? p.checksum.slice(0, 16) : '–',
      p.error ? p.error.slice(0, 80) : '',
    ]),
  );
}

export function formatRunList(runs: Run[]): string {
  if (runs.length === 0) return 'No runs on record.';
  return table(
    ['run id', 'job', 'status', 'published', 'range', 'created'],
    runs.map((r) => [
      r.runId,
      r.jobName,
      runLiveness(r).state === 'interrupted' ? 'interrupted (resumable)' : r.status,
      `${r.partitionsPublished}/${r.partitionsTotal}`,
      `${r.rangeFrom} → ${r.rangeTo}`,
      r.createdAt,
    ]),
    [1, 2, 4, 5],
  );
}

export function formatSanity(report: SanityReport): string {
  if (report.results.length === 0) return 'Source sanity checks: the job declares none (add `quality:` rules).';
  const rows = report.results.map((r) => [
    r.ok ? 'ok' : r.severity === 'fail' ? 'FAIL' : 'warn',
    r.rule,
    r.value === null ? '–' : String(r.value),
    r.threshold,
    r.message,
  ]);
  const head = report.blocked
    ? 'Source sanity checks: BLOCKED — the source is not healthy; fix it before recomputing from it'
    : 'Source sanity checks:';
  return `${head}\n${table(['result', 'rule', 'value', 'threshold', 'detail'], rows, [1, 3, 4])}`;
}

export function formatMetrics(m: RunMetrics): string {
  const age = m.checkpointAgeS === null ? '–' : `${m.checkpointAgeS} s`;
  const dup = m.duplicateKeys === null ? '– (not reconciled yet)' : String(m.duplicateKeys);
  const diff = m.validationDiffRatio === null ? '–' : m.validationDiffRatio.toFixed(6);
  return `  metrics: ${m.rowsPerMinute.toLocaleString('en-US')} rows/min over ${(m.activeMs / 1000).toFixed(1)} s active · checkpoint age ${age} · stops ${m.stopCount} · duplicate keys ${dup} · validation diff ratio ${diff} · throttled ${m.throttleCount} time(s), ${(m.throttledMs / 1000).toFixed(1)} s`;
}

/** Every throttle episode: when, how long, which signals at their worst, how it ended. */
export function formatThrottleEpisodes(episodes: readonly ThrottleEpisode[]): string {
  if (episodes.length === 0) return '';
  return `Throttle episodes:\n${table(
    ['since', 'for', 'outcome', 'signals (at their worst)'],
    episodes.map((e) => [e.since, `${(e.ms / 1000).toFixed(1)} s`, e.outcome === 'open' ? 'THROTTLED NOW' : e.outcome, e.reason]),
  )}`;
}
