/**
 * The charts of the change over partitions, as ECharts options (plain data): the Impact step
 * draws them in the app, the incident note renders the same options to static SVG
 * (engine/evidence/note/charts.ts). Rows now and after the run, a chosen measure now and after,
 * and — what shows a fix whose totals do not move — keys added, removed and changed.
 */
import type { KeyChange } from './keyChange.ts';

/** A dry run's row as the charts read it (DryRunView's rows and the dry-run evidence's partitions alike). */
export interface ChartRow {
  key: string;
  /** after the run (the recomputed rows) */
  source: Record<string, string | number | null>;
  /** now */
  target: Record<string, string | number | null>;
  keys?: KeyChange;
}

export type ChartOption = Record<string, unknown>;

const NOW = '#9e9e9e';
const AFTER = '#1565c0';
const KIND_COLORS = { added: '#2e7d32', removed: '#c62828', changed: '#ef8f00' } as const;

const num = (v: string | number | null | undefined): number | null => (v === null || v === undefined || v === '' ? null : Number(v));

/** The numeric measures the rows carry besides `rows` (sums of the job's numeric columns). */
export function chartMeasures(rows: readonly ChartRow[]): string[] {
  return [...new Set(rows.flatMap((r) => Object.keys(r.source)))].filter((k) => k !== 'rows');
}

/** Title above, legend below: nothing overlaps however long a measure's name (SVG text is measured by estimate). */
function base(rows: readonly ChartRow[], title: string): ChartOption {
  return {
    animation: false,
    title: { text: title, left: 0, top: 0, textStyle: { fontSize: 13, fontWeight: 600 } },
    legend: { bottom: 0, left: 0 },
    tooltip: { trigger: 'axis' },
    grid: { left: 56, right: 16, top: 34, bottom: 56 },
    xAxis: { type: 'category', data: rows.map((r) => r.key), axisLabel: { hideOverlap: true } },
    yAxis: { type: 'value' },
  };
}

export function rowsChartOption(rows: readonly ChartRow[]): ChartOption {
  return {
    ...base(rows, 'Rows per partition: now and after the run'),
    series: [
      { name: 'now', type: 'bar', color: NOW, data: rows.map((r) => num(r.target.rows)) },
      { name: 'after the run', type: 'bar', color: AFTER, data: rows.map((r) => num(r.source.rows)) },
    ],
  };
}

export function measureChartOption(rows: readonly ChartRow[], measure: string): ChartOption {
  return {
    ...base(rows, `${measure} per partition: now and after the run`),
    series: [
      // Wide and pale under the dashed "after": where both are equal, both stay visible.
      {
        name: 'now',
        type: 'line',
        color: NOW,
        symbolSize: 4,
        lineStyle: { width: 5, opacity: 0.5 },
        data: rows.map((r) => num(r.target[measure])),
      },
      {
        name: 'after the run',
        type: 'line',
        color: AFTER,
        symbolSize: 4,
        lineStyle: { type: 'dashed' },
        data: rows.map((r) => num(r.source[measure])),
      },
    ],
  };
}

/** Keys added, removed and changed per partition, stacked: non-zero even where every total stays the same. */
export function keysChartOption(rows: readonly ChartRow[]): ChartOption {
  return {
    ...base(rows, 'Keys the run adds, removes and changes, per partition'),
    series: (['added', 'removed', 'changed'] as const).map((kind) => ({
      name: kind,
      type: 'bar',
      stack: 'keys',
      color: KIND_COLORS[kind],
      data: rows.map((r) => r.keys?.[kind] ?? null),
    })),
  };
}
