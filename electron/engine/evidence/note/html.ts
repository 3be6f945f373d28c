/**
 * The incident note as one self-contained HTML page (inline CSS, inline SVG charts, no scripts,
 * no requests) that prints cleanly to PDF: A4 pages, table headers repeated, rows, headings and
 * charts never split.
 */
import type { Block, Table } from './blocks.ts';
import type { NoteModel } from './model.ts';

const esc = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function table({ header, rows }: Table): string {
  if (rows.length === 0) return '<p class="none">none</p>';
  return `<table><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td class="${/^(NO|failed|FAILED)$/.test(c) ? 'bad' : ''}">${esc(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

const pairs = (items: [string, string][]) => `<dl>${items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`;
const STATE = { done: '✔ done', failed: '✘ failed', missing: '○ missing' } as const;

/**
 * **Hazard**: the SVG is inserted as markup. It comes from ECharts' renderer over the note's
 * data, which escapes text; a `<script>` or an event handler could still only come from a
 * broken renderer, so both are refused here, and the page's CSP forbids scripts anyway.
 */
function svg(markup: string): string {
  if (!markup.trimStart().startsWith('<svg') || /<script|\son[a-z]+\s*=|javascript:/i.test(markup))
    return '<p class="none">chart not shown</p>';
  return markup;
}

function block(b: Block): string {
  switch (b.kind) {
    case 'facts':
      return pairs(b.items);
    case 'text':
      return `<p${b.tone ? ` class="${b.tone}"` : ''}>${esc(b.text)}</p>`;
    case 'table':
      return `${b.caption ? `<p class="caption">${esc(b.caption)}</p>` : ''}${table(b.table)}`;
    case 'comment':
      return `<blockquote class="comment"><p class="who"><strong>${esc(b.who)}</strong> (${esc(b.role)}, ${esc(b.at)})</p><p class="words">${esc(b.text)}</p></blockquote>`;
    case 'chart':
      return `<figure class="chart" role="img" aria-label="${esc(b.alt)}">${svg(b.svg)}<figcaption>${esc(b.title)}: ${esc(b.alt)}</figcaption></figure>`;
    case 'checklist':
      return `<ul class="checklist">${b.steps
        .map(
          (s) =>
            `<li><span class="state ${s.state}">${STATE[s.state]}</span> <strong>${esc(s.step)}</strong><ul>${s.evidence.map((e) => `<li>${esc(e)}</li>`).join('')}</ul></li>`,
        )
        .join('')}</ul>`;
  }
}

const CSS = `
:root { color-scheme: light; }
body { font: 10.5pt/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #111; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; }
h1 { font-size: 18pt; margin: 0 0 .2rem; }
.subtitle { color: #555; margin: 0 0 .8rem; }
.verdict { border-left: 4px solid #2e7d32; background: #f1f8f1; padding: .4rem .7rem; margin: 0 0 1rem; }
.verdict.broken { border-color: #c62828; background: #fdecea; }
h2 { font-size: 13pt; border-bottom: 1px solid #bbb; padding-bottom: .15rem; margin: 1.4rem 0 .5rem; break-after: avoid; page-break-after: avoid; }
p.bad { color: #b71c1c; font-weight: 600; } p.ok { color: #1b5e20; }
p.caption { font-weight: 600; margin: .8rem 0 .1rem; break-after: avoid; page-break-after: avoid; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .4rem 0; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; font-size: 8.5pt; margin: .4rem 0; }
th, td { border: 1px solid #ccc; padding: .15rem .35rem; text-align: left; vertical-align: top; overflow-wrap: break-word; }
th { background: #f0f0f0; hyphens: manual; }
td.bad { color: #b71c1c; font-weight: 600; }
thead { display: table-header-group; }
tr, li, dl, figure, blockquote { break-inside: avoid; page-break-inside: avoid; }
blockquote.comment { border-left: 4px solid #90a4ae; background: #f5f7f8; margin: .5rem 0; padding: .3rem .8rem; }
blockquote.comment .who { margin: 0 0 .2rem; color: #333; }
blockquote.comment .words { margin: 0; white-space: pre-wrap; }
figure.chart { margin: .6rem 0; } figure.chart svg { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 8.5pt; color: #555; }
ul.checklist { list-style: none; padding-left: 0; } ul.checklist > li { margin: .3rem 0; }
ul.checklist ul { margin: .1rem 0 0 1.6rem; padding: 0; color: #333; }
.state { display: inline-block; min-width: 4.2rem; font-weight: 700; }
.state.done { color: #2e7d32; } .state.missing { color: #8d6e00; } .state.failed { color: #c62828; }
.none { color: #777; font-style: italic; }
* { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
@page { size: A4; margin: 14mm 12mm; }
@media print { body { margin: 0; max-width: none; padding: 0; } a { color: inherit; text-decoration: none; } }
`;

export function renderHtml(m: NoteModel): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(m.title)}</title>
<style>${CSS}</style>
</head>
<body>
<header><h1>${esc(m.title)}</h1><p class="subtitle">${esc(m.subtitle)}</p><p class="verdict${m.verdict.startsWith('NOT') ? ' broken' : ''}">${esc(m.verdict)}</p></header>
${m.sections.map((s) => `<section><h2>${esc(s.title)}</h2>${s.blocks.map(block).join('\n')}</section>`).join('\n')}
</body>
</html>
`;
}
