/**
 * The one renderer of incident notes: a bundle in, Markdown, HTML or the JSON bundle out. The
 * note shows the bundle's own verification, so a reader sees at once whether it is intact.
 */
import { assertNever } from '../../../../shared/errors.ts';
import type { NoteBundle } from '../bundle.ts';
import type { NoteFormat } from '../exportNote.ts';
import { registryTrust, type Trust } from '../trust.ts';
import { verifyBundle } from '../verifyBundle.ts';
import { renderHtml } from './html.ts';
import { renderMarkdown } from './markdown.ts';
import { buildNoteModel } from './model.ts';

/**
 * `trust` is whose keys the note's own verdict relies on: the exporting workspace's registry
 * when the caller has it; by default the registry as copied into the bundle at export, which
 * is the same thing a moment after export (an independent check is `run-backfill verify`).
 */
export function renderNote(bundle: NoteBundle, format: NoteFormat, trust?: Trust): string {
  const judged = () => verifyBundle(bundle, trust ?? registryTrust(bundle.identities, 'the exporting workspace', 'exporter'));
  switch (format) {
    case 'json':
      return `${JSON.stringify(bundle, null, 2)}\n`;
    case 'md':
      return renderMarkdown(buildNoteModel(bundle, judged()));
    case 'html':
      return renderHtml(buildNoteModel(bundle, judged()));
    default:
      return assertNever(format, 'note format');
  }
}
