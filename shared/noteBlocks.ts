/**
 * The blocks an incident note is made of (engine/evidence/note/), shared so History can show a
 * past run's story with the very sections its note prints: facts, sentences, tables, people's
 * words, charts and the checklist.
 */

export interface Table {
  header: string[];
  rows: string[][];
}

export type StepState = 'done' | 'missing' | 'failed';

export interface ChecklistStep {
  step: string;
  state: StepState;
  evidence: string[];
}

export type Block =
  | { kind: 'facts'; items: [string, string][] }
  | { kind: 'text'; text: string; tone?: 'ok' | 'bad' }
  | { kind: 'table'; table: Table; caption?: string }
  /** a person's words, quoted as written (Markdown keeps its line breaks) */
  | { kind: 'comment'; who: string; role: string; at: string; text: string }
  /** a static SVG (HTML and PDF); Markdown says what it shows; the app draws the chart itself */
  | { kind: 'chart'; title: string; svg: string; alt: string }
  | { kind: 'checklist'; steps: ChecklistStep[] };

export interface NoteSection {
  title: string;
  blocks: Block[];
}
