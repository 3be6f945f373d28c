/**
 * The Execute step's chart as data: one signal's readings against its throttle and critical
 * levels, the throttle episodes as shaded bands, and rows per minute (over the trailing minute)
 * on a second axis. Pure, so it is tested without a canvas; SignalChart.tsx only draws it.
 */
import { formatSignalValue } from '../../shared/signals.ts';

/** One signal over time, against its levels (the Execute step's chart). */
export interface SignalSeries {
  signal: string;
  label: string;
  unit: string;
  max?: number;
  critical?: number;
  /** [epoch ms, value]; null: it could not be measured then */
  points: [number, number | null][];
}

/** Rows per minute after each published partition, over the trailing minute (or since the first point, when shorter). */
export function rowsPerMinute(published: readonly [number, number][], since: number): [number, number][] {
  const WINDOW = 60_000;
  return published.map(([t], i) => {
    const from = Math.max(since, t - WINDOW);
    let rows = 0;
    for (let j = i; j >= 0; j--) {
      const p = published[j];
      if (!p || p[0] <= from) break;
      rows += p[1];
    }
    const minutes = Math.max(t - from, 1000) / 60_000;
    return [t, Math.round(rows / minutes)];
  });
}

export interface ChartInput {
  series: SignalSeries;
  published: readonly [number, number][];
  /** throttle episodes: [start, end] (end null: still throttled) */
  episodes: readonly [number, number | null][];
  now: number;
}

const COLORS = { signal: '#2f5bd3', max: '#a15c00', critical: '#b42318', rows: '#22a35a', band: 'rgba(245, 179, 1, 0.18)' };

/** The ECharts option (plain data: no functions, so it is also what the unit test checks). */
export function chartOption(c: ChartInput): Record<string, unknown> {
  const s = c.series;
  const first = Math.min(s.points[0]?.[0] ?? c.now, c.published[0]?.[0] ?? c.now);
  const unit = s.unit ? ` (${s.unit})` : '';
  // The scale follows the signal and its throttle level; a critical level far above them is named
  // in the panel's heading instead of squashing the line flat at the bottom.
  const seen = Math.max(0, ...s.points.map(([, v]) => v ?? 0));
  let top = Math.max(seen, s.max ?? 0) * 1.5 || 1;
  const showCritical = s.critical !== undefined && s.critical <= top * 1.5;
  if (showCritical && s.critical !== undefined) top = Math.max(top, s.critical * 1.15);
  const levels = [
    ...(s.max !== undefined
      ? [{ yAxis: s.max, name: `throttle ${formatSignalValue(s.max, s.unit)}`, lineStyle: { color: COLORS.max } }]
      : []),
    ...(showCritical && s.critical !== undefined
      ? [{ yAxis: s.critical, name: `critical ${formatSignalValue(s.critical, s.unit)}`, lineStyle: { color: COLORS.critical } }]
      : []),
  ];
  return {
    animation: false,
    grid: { left: 56, right: 64, top: 34, bottom: 28 },
    legend: { top: 0, data: [s.label + unit, 'rows per minute'], textStyle: { fontSize: 11 } },
    tooltip: { trigger: 'axis', renderMode: 'richText' },
    xAxis: { type: 'time', min: first, max: Math.max(c.now, first + 10_000) },
    yAxis: [
      { type: 'value', name: s.unit, min: 0, max: niceCeil(top), splitLine: { lineStyle: { color: '#e3e6ec' } } },
      { type: 'value', name: 'rows/min', min: 0, splitLine: { show: false } },
    ],
    series: [
      {
        name: s.label + unit,
        type: 'line',
        yAxisIndex: 0,
        showSymbol: false,
        // a gap where it could not be measured: never drawn as a value it did not have
        connectNulls: false,
        lineStyle: { color: COLORS.signal, width: 2 },
        itemStyle: { color: COLORS.signal },
        data: s.points.map(([t, v]) => [t, v]),
        markLine: {
          symbol: 'none',
          silent: true,
          label: { formatter: '{b}', position: 'insideEndTop', fontSize: 10 },
          lineStyle: { type: 'dashed', width: 1.5 },
          data: levels,
        },
        markArea: {
          silent: true,
          itemStyle: { color: COLORS.band },
          label: { show: true, position: 'insideTop', fontSize: 10, color: '#a15c00' },
          data: c.episodes.map(([from, to]) => [{ xAxis: from, name: 'throttled' }, { xAxis: to ?? c.now }]),
        },
      },
      {
        name: 'rows per minute',
        type: 'line',
        yAxisIndex: 1,
        step: 'end',
        showSymbol: true,
        symbolSize: 4,
        lineStyle: { color: COLORS.rows, width: 1.5 },
        itemStyle: { color: COLORS.rows },
        data: rowsPerMinute(c.published, first),
      },
    ],
  };
}

/** 1, 2 or 5 times a power of ten, at or above `x`: an axis top that reads well. */
export function niceCeil(x: number): number {
  if (!(x > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(x));
  for (const step of [1, 2, 5, 10]) if (step * power >= x) return step * power;
  return 10 * power;
}
