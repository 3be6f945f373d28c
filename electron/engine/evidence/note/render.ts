/**
 * The one renderer of incident notes: a bundle in, Markdown, HTML or the JSON bundle out. The
 * note shows the bundle's own verification, so a reader sees at once whether it is intact.
 */
import { assertNever } from '../../../../shared/errors.ts';
import type { NoteBundle } from '../bundle.ts';
import type { NoteFormat } from '../exportNote.ts';
import { verifyBundle } from '../verifyBundle.ts';
import { renderHtml } from './html.ts';
import { renderMarkdown } from './markdown.ts';
import { buildNoteModel } from './model.ts';

export function renderNote(bundle: NoteBundle, format: NoteFormat): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(bundle, null, 2)}\n`;
    case 'md':
      return renderMarkdown(buildNoteModel(bundle, verifyBundle(bundle)));
    case 'html':
      return renderHtml(buildNoteModel(bundle, verifyBundle(bundle)));
    default:
      return assertNever(format, 'note format');
  }
}
