/**
 * The incident note as data: what happened, the checklist with its evidence, partitions,
 * reconciliation, stop/resume history, metrics, and the chain head with its signatures. Built
 * from a bundle only, so the app, the CLI and anyone holding the bundle render the same note.
 */
import type { NoteBundle } from '../bundle.ts';
import { shortFingerprint } from '../keys.ts';
import { manifestHash } from '../manifest.ts';
import type { BundleVerification } from '../verifyBundle.ts';
import { checklist, type ChecklistStep } from './checklist.ts';
import { metrics, runHistory } from './metrics.ts';
import { IMPACT_SECTION, impactSection, type ImpactSection } from './impactSection.ts';
import { throttleMetrics, throttleTable } from './throttle.ts';

export const NOTE_SECTIONS = [
  'What happened',
  'Checklist',
  IMPACT_SECTION,
  'Partitions',
  'Reconciliation',
  'Stop and resume history',
  'Throttle episodes',
  'Metrics',
  'Audit chain and signatures',
] as const;

export interface Table {
  header: string[];
  rows: string[][];
}

export interface NoteModel {
  title: string;
  subtitle: string;
  what: [string, string][];
  checklist: ChecklistStep[];
  impact: ImpactSection;
  partitions: Table;
  reconciliation: { summary: string; table: Table };
  history: Table;
  throttle: Table;
  metrics: [string, string][];
  chain: [string, string][];
  signatures: Table;
  verdict: string;
}

type Obj = Record<string, unknown>;
const str = (v: unknown) => (v === null || v === undefined || v === '' ? '–' : typeof v === 'string' ? v : JSON.stringify(v));

export function buildNoteModel(bundle: NoteBundle, verification: BundleVerification): NoteModel {
  const run = (bundle.run[0] ?? {}) as Obj;
  const plan = ((bundle.plan[0]?.plan ?? {}) as Obj) ?? {};
  const range = (plan.range ?? {}) as Obj;
  const exported = bundle.audit.at(-1);
  const signers = verification.signatures.filter((s) => s.what.startsWith('sign-off') && s.valid);
  const signedBy = signers.map((s) => `${s.signer} (${s.role ?? 'unregistered'}, ${s.at})`).join('; ');
  const reconciliation = [...bundle.evidence].reverse().find((e) => e.kind === 'reconciliation');
  const reconBody = reconciliation ? (JSON.parse(reconciliation.bodyJson) as { ok?: boolean; partitions?: Obj[] }) : undefined;
  const checkpoints = bundle.checkpoints.map((c) => `seq ${c.seq} by ${c.signer} (key ${shortFingerprint(c.signerKey)}) at ${c.at}`);

  return {
    // A training run's note must never pass for a real one.
    title: `Incident note — backfill ${bundle.runId}${(run.settings as Obj | undefined)?.sandbox === true ? ' — SANDBOX TRAINING RUN, not production' : ''}`,
    subtitle: `${str(run.jobName)} · ${str(run.status)} · exported ${bundle.exportedAt} by ${bundle.exportedBy}`,
    what: [
      ['Reason', str(plan.reason)],
      ['Request', str(plan.request_id)],
      ['Job', `${str(run.jobName)} (${str(run.writeMode)})`],
      ['Range', `${str(range.from)} to ${str(range.to)} (half-open), ${str(run.unit)} partitions, ${str(run.timezone)}`],
      ['Automation tier', str(run.tier)],
      ['Requested by', str(run.requestedBy ?? plan.requested_by)],
      ['Signed off by', signedBy || 'nobody (no valid lead sign-off in this note)'],
      ['Executed by', str(run.executedBy)],
      ['When', `created ${str(run.createdAt)}, started ${str(run.startedAt)}, finished ${str(run.finishedAt)}`],
      [
        'Outcome',
        `${str(run.status)}: ${str(run.partitionsPublished)}/${str(run.partitionsTotal)} partitions published, ${str(run.partitionsFailed)} failed, ${str(run.rowsWritten)} rows${run.haltReason ? ` — ${str(run.haltReason)}` : ''}`,
      ],
      ['Plan hash', str(run.planHash)],
      ['Job hash', str(run.jobHash)],
    ],
    checklist: checklist(bundle, verification),
    impact: impactSection(bundle),
    partitions: {
      header: ['partition', 'status', 'attempt', 'rows', 'source rows', 'target rows', 'ms', 'checksum', 'error'],
      rows: bundle.partitions.map((p) => [
        str(p.key),
        str(p.status),
        str(p.attempt),
        str(p.rowsWritten),
        str(p.sourceCount),
        str(p.targetCount),
        str(p.durationMs),
        str(p.checksum).slice(0, 20),
        str(p.error),
      ]),
    },
    reconciliation: {
      summary: !reconciliation
        ? 'No reconciliation on record: completion was not verified.'
        : `Evidence #${reconciliation.id} at ${reconciliation.createdAt} (sha256 ${reconciliation.bodySha256.slice(0, 16)}…): ${reconBody?.ok ? 'source and target agree for every published partition' : 'source and target DO NOT agree'}.`,
      table: {
        header: ['partition', 'agrees', 'target rows', 'published rows', 'max diff ratio', 'problems'],
        rows: (reconBody?.partitions ?? []).map((r) => [
          str((r.partition as Obj | undefined)?.key),
          r.ok ? 'yes' : 'NO',
          str(r.targetCount),
          str(r.markedRows),
          String(Math.max(0, ...((r.checks as Obj[] | undefined) ?? []).map((c) => Number(c.diffRatio ?? 0)))),
          ((r.problems as string[] | undefined) ?? []).join('; ') || '–',
        ]),
      },
    },
    history: {
      header: ['at', 'event', 'actor', 'status', 'reason'],
      rows: runHistory(bundle).map((h) => [h.at, h.event, h.actor, h.status, h.reason]),
    },
    throttle: throttleTable(bundle),
    metrics: [...metrics(bundle, reconBody), ...throttleMetrics(bundle)],
    chain: [
      ['Audit slice', `seq ${str(bundle.audit[0]?.seq)} to ${str(exported?.seq)} (${bundle.audit.length} entries)`],
      ['Chain head', `${str(exported?.hash)} (seq ${str(exported?.seq)}, ${str(exported?.event)})`],
      ['Manifest sha256', manifestHash(bundle.manifest)],
      ['Signed checkpoints', checkpoints.join('; ') || 'none: the head is not signed'],
      [
        'Verify',
        `run-backfill verify ${bundle.runId}.json --trust LEAD.pub.pem --trust SIGNER.pub.pem (every signer's key; or where their identities are registered)`,
      ],
    ],
    signatures: {
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
    verdict: noteVerdict(verification),
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
