/**
 * Static SVG of the change charts (shared/changeCharts.ts) for the HTML note and its PDF:
 * ECharts' server-side renderer, no DOM, no script in the page. The same options the Impact
 * step draws.
 */
import * as echarts from 'echarts/core';
import { BarChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TitleComponent } from 'echarts/components';
import { SVGRenderer } from 'echarts/renderers';
import type { ChartOption } from '../../../../shared/changeCharts.ts';

echarts.use([BarChart, LineChart, GridComponent, LegendComponent, TitleComponent, SVGRenderer]);

export function chartSvg(option: ChartOption, width = 720, height = 240): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width, height });
  try {
    // No tooltip in a static image; everything else as the app draws it.
    const { tooltip: _tooltip, ...still } = option;
    chart.setOption({ ...still, textStyle: { fontFamily: 'system-ui, "DejaVu Sans", sans-serif' } });
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}
