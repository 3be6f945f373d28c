/**
 * The incident note as one self-contained HTML page (inline CSS, no scripts, no requests) that
 * prints cleanly to PDF: A4 pages, table headers repeated, rows and headings never split.
 */
import { NOTE_SECTIONS, type NoteModel, type Table } from './model.ts';
import { impactSectionHtml } from './impactSection.ts';

const esc = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function table({ header, rows }: Table, cls = ''): string {
  if (rows.length === 0) return '<p class="none">none</p>';
  return `<table class="${cls}"><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td class="${/^(NO|failed|FAILED)$/.test(c) ? 'bad' : ''}">${esc(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

const pairs = (items: [string, string][]) => `<dl>${items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`;
const section = (title: string, body: string) => `<section><h2>${esc(title)}</h2>${body}</section>`;

const CSS = `
:root { color-scheme: light; }
body { font: 10.5pt/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #111; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; }
h1 { font-size: 18pt; margin: 0 0 .2rem; }
.subtitle { color: #555; margin: 0 0 .8rem; }
.verdict { border-left: 4px solid #2e7d32; background: #f1f8f1; padding: .4rem .7rem; margin: 0 0 1rem; }
.verdict.broken { border-color: #c62828; background: #fdecea; }
h2 { font-size: 13pt; border-bottom: 1px solid #bbb; padding-bottom: .15rem; margin: 1.4rem 0 .5rem; break-after: avoid; page-break-after: avoid; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; font-size: 8.5pt; margin: .4rem 0; }
th, td { border: 1px solid #ccc; padding: .15rem .35rem; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background: #f0f0f0; }
td.bad { color: #b71c1c; font-weight: 600; }
thead { display: table-header-group; }
tr, li, dl { break-inside: avoid; page-break-inside: avoid; }
ul.checklist { list-style: none; padding-left: 0; } ul.checklist > li { margin: .3rem 0; }
ul.checklist ul { margin: .1rem 0 0 1.6rem; padding: 0; color: #333; }
.state { display: inline-block; min-width: 4.2rem; font-weight: 700; }
.state.done { color: #2e7d32; } .state.missing { color: #8d6e00; } .state.failed { color: #c62828; }
.none { color: #777; font-style: italic; }
h3 { font-size: 11pt; margin: .8rem 0 .3rem; break-after: avoid; page-break-after: avoid; }
figure.impact { margin: .5rem 0; overflow-x: auto; break-inside: avoid; page-break-inside: avoid; }
figure.impact svg { max-width: 100%; height: auto; }
figure.impact figcaption { color: #555; font-size: 8.5pt; }
* { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
@page { size: A4; margin: 14mm 12mm; }
@media print { body { margin: 0; max-width: none; padding: 0; } a { color: inherit; text-decoration: none; } }
`;

export function renderHtml(m: NoteModel): string {
  const [what, checklistTitle, impact, partitions, reconciliation, history, throttle, metrics, chain] = NOTE_SECTIONS;
  const checklist = `<ul class="checklist">${m.checklist
    .map(
      (s) =>
        `<li><span class="state ${s.state}">${s.state === 'done' ? '✔ done' : s.state === 'failed' ? '✘ failed' : '○ missing'}</span> <strong>${esc(s.step)}</strong><ul>${s.evidence.map((e) => `<li>${esc(e)}</li>`).join('')}</ul></li>`,
    )
    .join('')}</ul>`;
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
${section(what, pairs(m.what))}
${section(checklistTitle, checklist)}
${section(impact, impactSectionHtml(m.impact, table, esc))}
${section(partitions, table(m.partitions))}
${section(reconciliation, `<p>${esc(m.reconciliation.summary)}</p>${table(m.reconciliation.table)}`)}
${section(history, table(m.history))}
${section(throttle, table(m.throttle))}
${section(metrics, pairs(m.metrics))}
${section(chain, pairs(m.chain) + table(m.signatures))}
</body>
</html>
`;
}
