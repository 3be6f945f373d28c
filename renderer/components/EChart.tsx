/**
 * One ECharts chart from an option (shared/changeCharts.ts builds them). The canvas renderer:
 * it draws without style attributes, which the app's CSP (style-src 'self') would refuse; the
 * incident note renders the same options to SVG on the engine side.
 */
import { BarChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';
import type { ChartOption } from '../../shared/changeCharts.ts';

echarts.use([BarChart, LineChart, GridComponent, LegendComponent, TitleComponent, TooltipComponent, CanvasRenderer]);

export function EChart({ option, label, height = 240 }: { option: ChartOption; label: string; height?: number }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const chart = echarts.init(el, null, { renderer: 'canvas' });
    chart.setOption(option);
    // jsdom and old engines have no ResizeObserver: the chart then keeps its first size.
    const observer = typeof ResizeObserver === 'undefined' ? undefined : new ResizeObserver(() => chart.resize());
    observer?.observe(el);
    return () => {
      observer?.disconnect();
      chart.dispose();
    };
  }, [option]);
  return (
    <figure className="echart-figure">
      <div ref={ref} className="echart" style={{ height }} role="img" aria-label={label} />
    </figure>
  );
}
