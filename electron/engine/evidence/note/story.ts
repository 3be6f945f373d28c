/**
 * "The story": what happened and why, in a paragraph and in facts — the reason, who asked and
 * when, who signed off (with their words), who executed it and when, who closed it, and what it
 * came to. The first thing an incident ticket's reader needs.
 */
import { describeKeyChange, keysTouched, totalKeyChange } from '../../../../shared/keyChange.ts';
import type { NoteBundle } from '../bundle.ts';
import type { BundleVerification } from '../verifyBundle.ts';
import { str, type NoteSection } from './blocks.ts';
import type { NoteFacts } from './facts.ts';

type Obj = Record<string, unknown>;

export function storySection(bundle: NoteBundle, f: NoteFacts, verification: BundleVerification): NoteSection {
  const { run, plan } = f;
  const range = (plan.range ?? {}) as Obj;
  const requestedBy = str(run.requestedBy ?? plan.requested_by);
  const requestedAt = f.planCreatedAt ?? str(run.createdAt);
  const signoffs = bundle.signoffs.map((s) => {
    const st = s.statement;
    const valid = verification.signatures.some((v) => v.what.startsWith('sign-off') && v.valid && v.signer === st.signer && v.at === st.at);
    const role = verification.signatures.find((v) => v.signer === st.signer)?.role ?? 'not registered';
    return { signer: str(st.signer), role, at: str(st.at), comment: str(st.comment), valid };
  });
  const counted = signoffs.filter((s) => s.valid);
  const signedBy =
    counted.map((s) => `${s.signer} (${s.role}) at ${s.at}`).join('; ') ||
    (signoffs.length > 0 ? `nobody whose signature verifies (${signoffs.length} on record)` : 'nobody: no sign-off on record');
  const closedBy = f.closed
    ? `${f.closed.actor ?? str(runbookClosedBy(f.closed.body))} at ${f.closed.evidence.createdAt}`
    : 'not closed yet';
  const changes = f.actual.length > 0 ? f.actual : f.predicted;
  const totals = changes.length > 0 ? totalKeyChange(changes) : null;
  const outcome = `${str(run.status)}: ${str(run.partitionsPublished)}/${str(run.partitionsTotal)} partitions published, ${str(run.partitionsFailed)} failed, ${str(run.rowsWritten)} rows written${run.haltReason ? ` — ${str(run.haltReason)}` : ''}`;
  const snapshot = f.snapshot
    ? `${str(f.snapshot.body.location)} (evidence #${f.snapshot.evidence.id}, ${f.snapshot.evidence.createdAt})`
    : 'no snapshot on record';
  const story = [
    `${requestedBy} asked on ${requestedAt} to recompute ${str(run.jobName)} for ${str(range.from)} to ${str(range.to)} (half-open${run.unit ? `, ${str(run.unit)} partitions` : ''}) because: ${str(plan.reason)}.`,
    counted.length > 0
      ? `${counted.map((s) => `${s.signer} (${s.role})`).join(' and ')} signed off on ${counted[0]?.at ?? ''}.`
      : 'No lead sign-off counts in this note.',
    run.startedAt
      ? `${str(run.executedBy)} executed it from ${str(run.startedAt)} to ${str(run.finishedAt)}: ${outcome}.`
      : 'It has not been executed.',
    totals
      ? `${f.actual.length > 0 ? 'Measured against the snapshot after the run' : 'As the dry run predicted it'}, the change by key: ${keysTouched(totals) > 0 ? describeKeyChange(totals) : 'no key changes'}.`
      : '',
    f.closed ? `${closedBy.replace(/ at .*/, '')} closed the runbook at ${f.closed.evidence.createdAt}.` : '',
  ].filter((s) => s !== '');
  return {
    title: 'The story',
    blocks: [
      { kind: 'text', text: story.join(' ') },
      {
        kind: 'facts',
        items: [
          ['Why', str(plan.reason)],
          ['Request', str(plan.request_id)],
          ['Requested by', `${requestedBy}, ${requestedAt}`],
          ['Signed off by', signedBy],
          ['Executed by', `${str(run.executedBy)}, started ${str(run.startedAt)}, finished ${str(run.finishedAt)}`],
          ['Closed by', closedBy],
          [
            'Job',
            [str(run.jobName), f.job.target ? `→ ${targetOf(f.job)}` : '', run.writeMode ? `(${str(run.writeMode)})` : '']
              .filter(Boolean)
              .join(' '),
          ],
          ['Range', `${str(range.from)} to ${str(range.to)} (half-open), ${str(run.unit)} partitions, ${str(run.timezone)}`],
          ['Automation tier', str(run.tier)],
          ['Outcome', outcome],
          ['Restorable from', snapshot],
          ['Plan hash', str(run.planHash)],
          ['Job hash', str(run.jobHash)],
        ],
      },
    ],
  };
}

function targetOf(job: Obj): string {
  const t = (job.target ?? {}) as Obj;
  return t.kind === 's3' ? `s3 ${str(t.path)} on ${str(t.connection)}` : `${str(t.table)} on ${str(t.connection)}`;
}

function runbookClosedBy(body: Obj): unknown {
  const summary = (body.summary as [string, string][] | undefined) ?? [];
  return summary.find(([k]) => k === 'Closed by')?.[1];
}
