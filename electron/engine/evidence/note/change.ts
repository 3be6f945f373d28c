/**
 * "What changed": the change by key — the dry run's prediction and, when the row-count
 * comparison measured the partitions against their snapshot after the run, what really changed —
 * with per-column counts, the sums and what moved between keys, the largest movers, a sample of
 * changed keys before → after, and the charts over partitions as static SVG.
 */
import { chartMeasures, keysChartOption, measureChartOption, rowsChartOption, type ChartRow } from '../../../../shared/changeCharts.ts';
import { isZeroDecimal } from '../../../../shared/decimal.ts';
import { describeKeyChange, keysTouched, totalKeyChange, type KeyChangeTotals } from '../../../../shared/keyChange.ts';
import { str, type Block, type NoteSection } from './blocks.ts';
import { chartSvg } from './charts.ts';
import type { NoteFacts } from './facts.ts';

type Obj = Record<string, unknown>;
const SAMPLE_ROWS = 15;

export function changeSection(f: NoteFacts, options: { charts: boolean } = { charts: true }): NoteSection {
  const title = 'What changed';
  const predicted = f.predicted.length > 0 ? totalKeyChange(f.predicted, SAMPLE_ROWS) : null;
  const actual = f.actual.length > 0 ? totalKeyChange(f.actual, SAMPLE_ROWS) : null;
  const blocks: Block[] = [];
  const shown = actual ?? predicted;
  if (!shown) {
    blocks.push({
      kind: 'text',
      text: f.dryRun
        ? 'No change by key on record: the target cannot measure one (S3). The partitions and reconciliation below give the row counts.'
        : 'No dry run on record: nothing was measured before the run.',
    });
  } else {
    const grain = shown.grain.length > 0 ? ` at the grain (${shown.grain.join(', ')}, from ${str(shown.grainFrom)})` : '';
    blocks.push({
      kind: 'text',
      text: [
        actual
          ? `After the run, measured against the snapshot taken before it${grain}: ${describeKeyChange(actual)}.`
          : `The dry run predicted${grain}: ${describeKeyChange(predicted as KeyChangeTotals)}. The change after the run was not measured (no row-count comparison against a snapshot on record).`,
        actual && predicted
          ? sameCounts(actual, predicted)
            ? 'Exactly as the dry run predicted.'
            : `The dry run predicted: ${describeKeyChange(predicted)}.`
          : '',
      ]
        .filter((s) => s !== '')
        .join(' '),
      tone: actual && predicted && !sameCounts(actual, predicted) ? 'bad' : undefined,
    });
    blocks.push({ kind: 'table', caption: 'Keys', table: countsTable(predicted, actual) });
    blocks.push({ kind: 'table', caption: 'Columns changed (keys present before and after)', table: columnsTable(predicted, actual) });
    if (shown.measures.length > 0)
      blocks.push({
        kind: 'table',
        caption: `Sums ${actual ? 'before and after the run' : 'now and after the run (predicted)'}; "moved" counts every key's change, so it is not 0 when a total stays but keys move`,
        table: {
          header: ['measure', 'before', 'after', 'net', 'moved between keys'],
          rows: shown.measures.map((m) => [m.column, m.before, m.after, m.net, m.moved]),
        },
      });
    for (const column of [...new Set(shown.movers.map((m) => m.column))]) {
      const movers = shown.movers.filter((m) => m.column === column).slice(0, 10);
      const measures = shown.measures.map((m) => m.column);
      blocks.push({
        kind: 'table',
        caption: `Moved by ${column} (the largest)`,
        table: {
          header: [column, 'keys changed', ...measures.map((m) => `${m} net`)],
          rows: movers.map((m) => [m.value ?? 'NULL', String(m.keys), ...measures.map((c) => signed(m.net[c] ?? '0'))]),
        },
      });
    }
    if (shown.sample.length > 0)
      blocks.push({
        kind: 'table',
        caption: `Changed keys, before → after (${shown.sample.length} of ${keysTouched(shown)})`,
        table: sampleTable(shown),
      });
  }
  if (options.charts) blocks.push(...charts(f));
  return { title, blocks };
}

function sameCounts(a: KeyChangeTotals, b: KeyChangeTotals): boolean {
  return a.added === b.added && a.removed === b.removed && a.changed === b.changed;
}

const signed = (v: string): string => (v.startsWith('-') || isZeroDecimal(v) ? v : `+${v}`);

function countsTable(predicted: KeyChangeTotals | null, actual: KeyChangeTotals | null) {
  const row = (label: string, t: KeyChangeTotals) => [
    label,
    `${t.before} → ${t.after}`,
    String(t.added),
    String(t.removed),
    String(t.changed),
    String(t.unchanged),
    `${t.partitionsChanged} of ${t.partitions}`,
  ];
  return {
    header: ['', 'rows', 'added', 'removed', 'changed', 'unchanged', 'partitions changed'],
    rows: [...(predicted ? [row('predicted by the dry run', predicted)] : []), ...(actual ? [row('after the run', actual)] : [])],
  };
}

function columnsTable(predicted: KeyChangeTotals | null, actual: KeyChangeTotals | null) {
  const columns = [...new Set([...Object.keys(predicted?.columnChanges ?? {}), ...Object.keys(actual?.columnChanges ?? {})])];
  return {
    header: ['column', ...(predicted ? ['keys changed (predicted)'] : []), ...(actual ? ['keys changed (after the run)'] : [])],
    rows: columns.map((c) => [
      c,
      ...(predicted ? [String(predicted.columnChanges[c] ?? 0)] : []),
      ...(actual ? [String(actual.columnChanges[c] ?? 0)] : []),
    ]),
  };
}

function sampleTable(t: KeyChangeTotals) {
  const valueColumns = t.columns.filter((c) => !t.grain.includes(c));
  return {
    header: ['partition', 'change', `key (${t.grain.join(', ')})`, ...valueColumns],
    rows: t.sample.map((s) => [
      s.partition,
      s.kind,
      s.key.map((k) => k ?? 'NULL').join(', '),
      ...valueColumns.map((c) => {
        const i = t.columns.indexOf(c);
        const [b, a] = [s.before?.[i], s.after?.[i]];
        if (s.kind === 'added') return `– → ${a ?? 'NULL'}`;
        if (s.kind === 'removed') return `${b ?? 'NULL'} → –`;
        return b === a ? (b ?? 'NULL') : `${b ?? 'NULL'} → ${a ?? 'NULL'}`;
      }),
    ]),
  };
}

/** The dry run's rows as the change charts take them: every partition, now and after. */
export function dryRunChartRows(f: NoteFacts): ChartRow[] {
  return ((f.dryRun?.body.partitions as Obj[] | undefined) ?? []).map((p) => ({
    key: str((p.partition as Obj | undefined)?.key),
    source: (p.source ?? {}) as ChartRow['source'],
    target: (p.target ?? {}) as ChartRow['target'],
    keys: p.keys as ChartRow['keys'],
  }));
}

/** The charts over partitions, from the dry run's rows. */
function charts(f: NoteFacts): Block[] {
  const rows = dryRunChartRows(f);
  if (rows.length === 0) return [];
  const blocks: Block[] = [];
  if (rows.some((r) => r.keys))
    blocks.push({
      kind: 'chart',
      title: 'Keys per partition',
      svg: chartSvg(keysChartOption(rows)),
      alt: `keys added, removed and changed per partition over ${rows.length} partitions (dry run)`,
    });
  blocks.push({
    kind: 'chart',
    title: 'Rows per partition',
    svg: chartSvg(rowsChartOption(rows)),
    alt: `rows now and after the run over ${rows.length} partitions (dry run)`,
  });
  const measure = chartMeasures(rows)[0];
  if (measure)
    blocks.push({
      kind: 'chart',
      title: `${measure} per partition`,
      svg: chartSvg(measureChartOption(rows, measure)),
      alt: `${measure} now and after the run over ${rows.length} partitions (dry run)`,
    });
  return blocks;
}
