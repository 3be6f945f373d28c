/**
 * A small live chart (ECharts, canvas): one watched signal against its throttle and critical
 * levels, throttle episodes shaded, rows per minute beside it. Canvas and a rich-text tooltip,
 * so nothing needs an inline style the CSP would refuse.
 */
import { useEffect, useRef } from 'react';
import { init, use, type ECharts } from 'echarts/core';
import { LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, MarkAreaComponent, MarkLineComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';
import { chartOption, type ChartInput } from '../lib/signalChart.ts';

use([LineChart, GridComponent, LegendComponent, MarkAreaComponent, MarkLineComponent, TooltipComponent, CanvasRenderer]);

export function SignalChart(props: ChartInput & { label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<ECharts | null>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const c = init(el, undefined, { renderer: 'canvas' });
    chart.current = c;
    const resize = new ResizeObserver(() => c.resize());
    resize.observe(el);
    return () => {
      resize.disconnect();
      c.dispose();
      chart.current = null;
    };
  }, []);

  const { series, published, episodes, now } = props;
  useEffect(() => {
    chart.current?.setOption(chartOption({ series, published, episodes, now }), { notMerge: true });
  }, [series, published, episodes, now]);

  return <div className="signal-chart" ref={box} role="img" aria-label={props.label} data-testid="signal-chart" />;
}
