/**
 * The impact graph as a static SVG for the HTML note: the same layout as the app's graph
 * (shared/impactLayout.ts), drawn as plain shapes and text — no script, no font or image to
 * fetch, so it prints and survives the note's strict Content-Security-Policy.
 */
import type { ImpactGraph, ImpactNode } from '../../../../shared/impact.ts';
import { KIND_WORD, layoutImpact } from '../../../../shared/impactLayout.ts';

const esc = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Fill and stroke per kind: the target stands out, what goes stale is warm, what only fires is grey. */
const TONE: Record<ImpactNode['kind'], [string, string]> = {
  source: ['#eef3fb', '#5b7db1'],
  target: ['#1f4e8c', '#1f4e8c'],
  view: ['#eef7ee', '#4f8a4f'],
  'materialized-view': ['#fff4e5', '#c77700'],
  partition: ['#f3f0fa', '#7a62b3'],
  parent: ['#f3f0fa', '#7a62b3'],
  references: ['#f4f4f4', '#777777'],
  'referenced-by': ['#fdecea', '#b23b3b'],
  trigger: ['#f4f4f4', '#777777'],
  publication: ['#f4f4f4', '#777777'],
  job: ['#fff4e5', '#c77700'],
  declared: ['#ffffff', '#999999'],
};

export function impactSvg(graph: ImpactGraph): string {
  const laid = layoutImpact(graph);
  const edges = laid.edges
    .map((e) => {
      const d = e.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
      return `<path d="${d}" fill="none" stroke="#8a8a8a" stroke-width="1.2" marker-end="url(#impact-arrow)"><title>${esc(e.label)}</title></path>`;
    })
    .join('');
  const nodes = laid.nodes
    .map((n) => {
      const [fill, stroke] = TONE[n.kind];
      const text = n.kind === 'target' ? '#ffffff' : '#1a1a1a';
      const tags = [KIND_WORD[n.kind], n.stale ? 'stale after the run' : '', n.declared && n.kind !== 'declared' ? 'declared' : '']
        .filter(Boolean)
        .join(' · ');
      return (
        `<g><title>${esc(`${n.label} — ${n.what}: ${n.reason}`)}</title>` +
        `<rect x="${n.x.toFixed(1)}" y="${n.y.toFixed(1)}" width="${n.width}" height="${n.height}" rx="7" fill="${fill}" stroke="${stroke}" stroke-width="${n.kind === 'target' ? 2 : 1.3}"${n.stale ? ' stroke-dasharray="5 3"' : ''}/>` +
        `<text x="${(n.x + 10).toFixed(1)}" y="${(n.y + 23).toFixed(1)}" font-size="12.5" font-weight="600" fill="${text}">${esc(cut(n.label, 32))}</text>` +
        `<text x="${(n.x + 10).toFixed(1)}" y="${(n.y + 42).toFixed(1)}" font-size="10.5" fill="${n.kind === 'target' ? '#dce6f5' : n.stale ? '#9a5b00' : '#555555'}">${esc(cut(tags, 40))}</text>` +
        `</g>`
      );
    })
    .join('');
  const label = `Impact of the backfill: ${graph.nodes.length} node(s), ${graph.nodes.filter((n) => n.stale).length} stale after the run`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="impact-graph" role="img" aria-label="${esc(label)}" viewBox="0 0 ${laid.width} ${laid.height}" width="${laid.width}" height="${laid.height}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif">` +
    `<defs><marker id="impact-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#8a8a8a"/></marker></defs>` +
    edges +
    nodes +
    `</svg>`
  );
}
