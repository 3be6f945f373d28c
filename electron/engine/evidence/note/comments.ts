/**
 * "Comments": the people's own words — the lead's with each sign-off, and the operator's
 * closing comment from the Close step — quoted as written, in the Markdown as in the HTML.
 */
import type { NoteBundle } from '../bundle.ts';
import type { BundleVerification } from '../verifyBundle.ts';
import { str, type Block, type NoteSection } from './blocks.ts';
import type { NoteFacts } from './facts.ts';

export function commentsSection(bundle: NoteBundle, f: NoteFacts, verification: BundleVerification): NoteSection {
  const blocks: Block[] = [];
  for (const s of bundle.signoffs) {
    const st = s.statement;
    const role = verification.signatures.find((v) => v.signer === st.signer)?.role ?? 'signer, not registered';
    const text = typeof st.comment === 'string' ? st.comment.trim() : '';
    blocks.push({
      kind: 'comment',
      who: str(st.signer),
      role: `${role}, signing off`,
      at: str(st.at),
      text: text || '(signed without a comment)',
    });
  }
  const closing = typeof f.closed?.body.comment === 'string' ? f.closed.body.comment.trim() : '';
  if (f.closed)
    blocks.push({
      kind: 'comment',
      who: f.closed.actor ?? 'the operator',
      role: 'operator, closing the runbook',
      at: f.closed.evidence.createdAt,
      text: closing || '(closed without a comment)',
    });
  if (blocks.length === 0) blocks.push({ kind: 'text', text: 'No comments on record: no sign-off and no closing yet.' });
  return { title: 'Comments', blocks };
}
