/** The incident note as Markdown, for a ticket. */
import { NOTE_SECTIONS, type NoteModel, type Table } from './model.ts';
import { impactSectionMarkdown } from './impactSection.ts';

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

export function renderMarkdown(m: NoteModel): string {
  const [what, checklistTitle, impact, partitions, reconciliation, history, throttle, metrics, chain] = NOTE_SECTIONS;
  return [
    `# ${m.title}`,
    '',
    `_${m.subtitle}_`,
    '',
    `> ${m.verdict}`,
    '',
    `## ${what}`,
    '',
    pairs(m.what),
    '',
    `## ${checklistTitle}`,
    '',
    ...m.checklist.map(
      (s) =>
        `- ${MARK[s.state]} **${s.step}**${s.state === 'done' ? '' : ` (${s.state})`}\n${s.evidence.map((e) => `  - ${e}`).join('\n')}`,
    ),
    '',
    `## ${impact}`,
    '',
    impactSectionMarkdown(m.impact, table),
    '',
    `## ${partitions}`,
    '',
    table(m.partitions),
    '',
    `## ${reconciliation}`,
    '',
    m.reconciliation.summary,
    '',
    table(m.reconciliation.table),
    '',
    `## ${history}`,
    '',
    table(m.history),
    '',
    `## ${throttle}`,
    '',
    table(m.throttle),
    '',
    `## ${metrics}`,
    '',
    pairs(m.metrics),
    '',
    `## ${chain}`,
    '',
    pairs(m.chain),
    '',
    table(m.signatures),
    '',
  ].join('\n');
}
