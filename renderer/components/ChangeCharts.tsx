/**
 * The change over partitions as charts: keys added / removed / changed (what shows a fix whose
 * totals stay the same), rows now and after, and a measure the reader picks, now and after.
 */
import { useMemo, useState } from 'react';
import { chartMeasures, keysChartOption, measureChartOption, rowsChartOption, type ChartRow } from '../../shared/changeCharts.ts';
import { EChart } from './EChart.tsx';

export function ChangeCharts({ rows }: { rows: readonly ChartRow[] }) {
  const measures = useMemo(() => chartMeasures(rows), [rows]);
  const [picked, setPicked] = useState<string | null>(null);
  const measure = picked !== null && measures.includes(picked) ? picked : measures[0];
  const keys = useMemo(() => (rows.some((r) => r.keys) ? keysChartOption(rows) : null), [rows]);
  const counts = useMemo(() => rowsChartOption(rows), [rows]);
  const sums = useMemo(() => (measure ? measureChartOption(rows, measure) : null), [rows, measure]);
  if (rows.length === 0) return null;
  return (
    <div className="change-charts" data-testid="change-charts">
      {keys && <EChart option={keys} label={`Keys added, removed and changed per partition, over ${rows.length} partitions`} />}
      <EChart option={counts} label={`Rows per partition now and after the run, over ${rows.length} partitions`} />
      {sums && measure && (
        <>
          <div className="field chart-pick">
            <label htmlFor="chart-measure">Measure</label>
            <select id="chart-measure" value={measure} onChange={(e) => setPicked(e.target.value)}>
              {measures.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </div>
          <EChart option={sums} label={`${measure} per partition now and after the run`} />
        </>
      )}
    </div>
  );
}
