/**
 * The Execute step's chart as data (renderer/lib/signalChart.ts): the signal against its levels,
 * throttle episodes as bands, rows per minute over the trailing minute, an axis that shows the
 * line rather than a far-off critical level. Drawn by ECharts in the e2e test.
 */
import { describe, expect, it } from 'vitest';
import { chartOption, niceCeil, rowsPerMinute, type SignalSeries } from '../../renderer/lib/signalChart.ts';

const lag: SignalSeries = {
  signal: 'replication-lag',
  label: 'replication lag on replica "r"',
  unit: 's',
  max: 5,
  critical: 12,
  points: [
    [1_000, 0.2],
    [2_000, null],
    [3_000, 8],
  ],
};

type Series = { name: string; data: unknown[]; markLine?: { data: { yAxis: number; name: string }[] }; markArea?: { data: unknown[] } };

describe('the signal chart', () => {
  it('draws the readings with gaps where nothing was measured, both levels, and the throttle episodes', () => {
    const o = chartOption({ series: lag, published: [], episodes: [[2_500, null]], now: 4_000 });
    const [signal] = o.series as Series[];
    expect(signal?.data).toEqual([
      [1_000, 0.2],
      [2_000, null],
      [3_000, 8],
    ]);
    expect(signal?.markLine?.data.map((l) => [l.yAxis, l.name])).toEqual([
      [5, 'throttle 5 s'],
      [12, 'critical 12 s'],
    ]);
    expect(signal?.markArea?.data).toEqual([[{ xAxis: 2_500, name: 'throttled' }, { xAxis: 4_000 }]]);
    expect((o.yAxis as { max?: number }[])[0]?.max).toBe(20);
  });

  it('leaves a critical level far above the line out of the scale (the heading names it)', () => {
    const o = chartOption({ series: { ...lag, critical: 3600 }, published: [], episodes: [], now: 4_000 });
    const [signal] = o.series as Series[];
    expect(signal?.markLine?.data.map((l) => l.name)).toEqual(['throttle 5 s']);
    expect((o.yAxis as { max?: number }[])[0]?.max).toBe(20);
  });

  it('rows per minute over the trailing minute, or since the first point when the run is younger', () => {
    expect(
      rowsPerMinute(
        [
          [10_000, 100],
          [40_000, 200],
          [100_000, 300],
        ],
        0,
      ),
    ).toEqual([
      [10_000, 600], // 100 rows in 10 s
      [40_000, 450], // 300 rows in 40 s
      [100_000, 300], // the minute after 40 s holds only the 300 at 100 s
    ]);
  });

  it.each([
    [0.3, 0.5],
    [7, 10],
    [12.1, 20],
    [999, 1000],
    [0, 1],
  ])('an axis top of %s reads as %s', (x, top) => expect(niceCeil(x)).toBe(top));
});
