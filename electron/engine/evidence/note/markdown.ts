/** The incident note as Markdown, for a ticket: every block of every section; a chart says what it shows. */
import type { Block, Table } from './blocks.ts';
import type { NoteModel } from './model.ts';

const cell = (text: string) => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

function table({ header, rows }: Table): string {
  if (rows.length === 0) return '_none_';
  return [
    `| ${header.map(cell).join(' | ')} |`,
    `|${header.map(() => ' --- ').join('|')}|`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

const pairs = (items: [string, string][]) => items.map(([k, v]) => `- **${k}:** ${v.replace(/\r?\n/g, ' ')}`).join('\n');
const MARK = { done: '[x]', missing: '[ ]', failed: '[!]' } as const;

/** A person's words as a block quote, line by line, so their paragraphs survive. */
const quote = (text: string) =>
  text
    .split(/\r?\n/)
    .map((line) => `> ${line}`)
    .join('\n');

function block(b: Block): string {
  switch (b.kind) {
    case 'facts':
      return pairs(b.items);
    case 'text':
      return b.text;
    case 'table':
      return `${b.caption ? `**${b.caption}**\n\n` : ''}${table(b.table)}`;
    case 'comment':
      return `**${b.who}** (${b.role}, ${b.at}):\n\n${quote(b.text)}`;
    case 'chart':
      return `_Chart — ${b.title}: ${b.alt} (drawn in the HTML note)._`;
    case 'checklist':
      return b.steps
        .map(
          (s) =>
            `- ${MARK[s.state]} **${s.step}**${s.state === 'done' ? '' : ` (${s.state})`}\n${s.evidence.map((e) => `  - ${e}`).join('\n')}`,
        )
        .join('\n');
  }
}

export function renderMarkdown(m: NoteModel): string {
  return [
    `# ${m.title}`,
    '',
    `_${m.subtitle}_`,
    '',
    `> ${m.verdict}`,
    '',
    ...m.sections.flatMap((s) => [`## ${s.title}`, '', ...s.blocks.flatMap((b) => [block(b), ''])]),
  ].join('\n');
}
