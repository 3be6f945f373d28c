/**
 * The incident note as data: a title, its own verdict, and sections — each built by its own
 * module from the bundle alone, so the app, the CLI and anyone holding the bundle render the same
 * note. The order is the order a reader needs: the story, what changed, people's words, who to
 * tell, then the evidence.
 */
import type { NoteBundle } from '../bundle.ts';
import { shortFingerprint } from '../keys.ts';
import { manifestHash } from '../manifest.ts';
import type { BundleVerification } from '../verifyBundle.ts';
import { str, type NoteSection } from './blocks.ts';
import { changeSection } from './change.ts';
import { checklist } from './checklist.ts';
import { commentsSection } from './comments.ts';
import { downstreamSection } from './downstream.ts';
import { noteFacts, type NoteFacts } from './facts.ts';
import { metrics, runHistory } from './metrics.ts';
import { partitionsSection, reconciliationSection } from './partitions.ts';
import { storySection } from './story.ts';
import { throttleMetrics, throttleTable } from './throttle.ts';
import { IMPACT_SECTION, impactSection } from './impactSection.ts';

export type { Table } from './blocks.ts';

/** Every section's title, in order (each is always present; an empty one says so). */
export const NOTE_SECTIONS = [
  'The story',
  'What changed',
  IMPACT_SECTION,
  'Comments',
  'Downstream to notify',
  'Checklist',
  'Partitions',
  'Reconciliation',
  'Stop and resume episodes',
  'Throttle episodes',
  'Metrics',
  'Audit chain and signatures',
] as const;

export interface NoteModel {
  title: string;
  subtitle: string;
  verdict: string;
  sections: NoteSection[];
}

type Build = (bundle: NoteBundle, f: NoteFacts, v: BundleVerification) => NoteSection;

const BUILDERS: Record<(typeof NOTE_SECTIONS)[number], Build> = {
  'The story': storySection,
  'What changed': (_b, f) => changeSection(f),
  [IMPACT_SECTION]: (b) => impactSection(b),
  Comments: commentsSection,
  'Downstream to notify': (_b, f) => downstreamSection(f),
  Checklist: (b, _f, v) => ({ title: 'Checklist', blocks: [{ kind: 'checklist', steps: checklist(b, v) }] }),
  Partitions: (b) => partitionsSection(b),
  Reconciliation: (_b, f) => reconciliationSection(f),
  'Stop and resume episodes': (b) => ({
    title: 'Stop and resume episodes',
    blocks: [
      {
        kind: 'table',
        table: {
          header: ['at', 'event', 'actor', 'status', 'reason'],
          rows: runHistory(b).map((h) => [h.at, h.event, h.actor, h.status, h.reason]),
        },
      },
    ],
  }),
  'Throttle episodes': (b) => ({ title: 'Throttle episodes', blocks: [{ kind: 'table', table: throttleTable(b) }] }),
  Metrics: (b, f) => ({
    title: 'Metrics',
    blocks: [{ kind: 'facts', items: [...metrics(b, f.reconciliation?.body), ...throttleMetrics(b)] }],
  }),
  'Audit chain and signatures': chainSection,
};

export function buildNoteModel(bundle: NoteBundle, verification: BundleVerification): NoteModel {
  const f = noteFacts(bundle);
  const { run } = f;
  return {
    // A training run's note must never pass for a real one.
    title: `Incident note — backfill ${bundle.runId}${(run.settings as Record<string, unknown> | undefined)?.sandbox === true ? ' — SANDBOX TRAINING RUN, not production' : ''}`,
    subtitle: `${str(run.jobName)} · ${str(run.status)} · exported ${bundle.exportedAt} by ${bundle.exportedBy}`,
    verdict: noteVerdict(verification),
    sections: NOTE_SECTIONS.map((title) => BUILDERS[title](bundle, f, verification)),
  };
}

function chainSection(bundle: NoteBundle, _f: NoteFacts, verification: BundleVerification): NoteSection {
  const exported = bundle.audit.at(-1);
  const anchor = exported?.detail.anchor as { seq?: number; hash?: string } | null | undefined;
  const checkpoints = bundle.checkpoints.map((c) => `seq ${c.seq} by ${c.signer} (key ${shortFingerprint(c.signerKey)}) at ${c.at}`);
  return {
    title: 'Audit chain and signatures',
    blocks: [
      {
        kind: 'facts',
        items: [
          [
            'Audit segment',
            `this run's ${bundle.audit.length} entries, seq ${str(bundle.audit[0]?.seq)} to ${str(exported?.seq)} (other runs' entries in between are left out)`,
          ],
          ['Anchor', anchor?.hash ? `follows seq ${str(anchor.seq)}, hash ${anchor.hash}` : '–'],
          ['Chain head', `${str(exported?.hash)} (seq ${str(exported?.seq)}, ${str(exported?.event)})`],
          ['Manifest sha256', manifestHash(bundle.manifest)],
          ['Signed checkpoints', checkpoints.join('; ') || 'none: the head is not signed'],
          [
            'Verify',
            `run-backfill verify ${bundle.runId}.json --trust LEAD.pub.pem --trust SIGNER.pub.pem (every signer's key; or where their identities are registered)`,
          ],
        ],
      },
      {
        kind: 'table',
        table: {
          header: ['what', 'signer', 'role', 'key', 'at', 'verified'],
          rows: verification.signatures.map((s) => [
            s.what,
            s.signer,
            s.role ?? 'not registered',
            shortFingerprint(s.fingerprint),
            s.at,
            s.valid ? 'yes' : 'NO',
          ]),
        },
      },
    ],
  };
}

/** The note's one sentence about itself, from the verdict verify would give with the exporter's keys. */
function noteVerdict(v: BundleVerification): string {
  switch (v.verdict) {
    case 'intact':
      return 'Intact at export, head signed.';
    case 'broken':
      return `NOT intact: ${v.broken.join(' | ')}`;
    case 'untrusted':
      return `Intact at export, ${v.signedHead ? 'head signed' : 'head NOT signed'}; not vouched for by a registered key: ${v.untrusted.join(' | ')}`;
    case 'not-signed-off':
      return `Intact at export, head signed; NOT SIGNED OFF: ${v.signoff.problems.join(' | ')}`;
  }
}
