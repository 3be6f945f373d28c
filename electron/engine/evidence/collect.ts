/**
 * Gathers everything on record about one run into bundle sections: the run, its plan and job,
 * partitions, evidence (the run's and its plan's dry runs), sign-offs of the plan, the
 * identities that signed them, and the run's own segment of the audit chain — its entries
 * only, never another run's (exportNote.ts records which seqs the segment holds, so a verifier
 * can tell a gap left on purpose from an entry removed).
 */
import { InputError } from '../../../shared/errors.ts';
import type { Store } from '../store/index.ts';
import { toChainedEntry } from '../store/repos/audit.ts';
import type { BundleEvidence, BundleSections } from './bundle.ts';
import type { ChainedEntry } from './chain.ts';
import { evidenceRepos } from './repos.ts';

/** What makes an audit entry one of the run's: its run id, its plan, or evidence and sign-offs of its plan. */
const OF_RUN = `run_id = @runId
         OR (entity = 'plan' AND entity_id = @planHash)
         OR (entity IN ('evidence', 'signoff') AND json_extract(detail_json, '$.planHash') = @planHash)`;

/** The run's entries of the audit chain, in seq order, with their hashes. */
export function runSegment(store: Store, runId: string, planHash: string): ChainedEntry[] {
  return store.db
    .prepare<{ runId: string; planHash: string }, Parameters<typeof toChainedEntry>[0]>(
      `SELECT * FROM audit_log WHERE ${OF_RUN} ORDER BY seq`,
    )
    .all({ runId, planHash })
    .map(toChainedEntry);
}

/** Runs of consecutive seqs, `[[3, 9], [14, 14]]`: how a note.exported entry records the segment it closes. */
export function seqRanges(seqs: readonly number[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (const seq of seqs) {
    const last = ranges.at(-1);
    if (last && seq === last[1] + 1) last[1] = seq;
    else ranges.push([seq, seq]);
  }
  return ranges;
}

export function collectRun(store: Store, runId: string): BundleSections {
  const run = store.runs.get(runId);
  if (!run)
    throw new InputError(`no run "${runId}" in ${store.file}`, {
      field: '--run-id',
      value: runId,
      hint: 'list runs with `run-backfill status`',
    });
  const plan = store.plans.get(run.planHash);
  const job = store.jobs.get(run.jobName);
  const { signoffs, identities } = evidenceRepos(store);
  const bodyOf = store.db.prepare<[number], string>('SELECT body_json FROM evidence WHERE id = ?').pluck();
  const seen = new Set<number>();
  const evidence: BundleEvidence[] = [];
  for (const e of [...store.evidence.list({ planHash: run.planHash }), ...store.evidence.list({ runId })].sort((a, b) => a.id - b.id)) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    evidence.push({
      id: e.id,
      runId: e.runId,
      planHash: e.planHash,
      kind: e.kind,
      createdAt: e.createdAt,
      bodyJson: bodyOf.get(e.id) ?? '',
      bodySha256: e.bodySha256,
    });
  }
  const signoffList = signoffs.forPlan(run.planHash);
  const signers = new Set(signoffList.map((s) => s.signer));
  return {
    run: [{ ...run }],
    plan: plan
      ? [{ planHash: plan.planHash, requestId: plan.requestId, jobName: plan.jobName, plan: plan.plan, createdAt: plan.createdAt }]
      : [],
    // The jobs table keeps a job's newest definition: include it only if it is the version that ran.
    job: job && job.jobHash === run.jobHash ? [{ jobHash: job.jobHash, definition: job.definition }] : [],
    partitions: store.partitions.list(runId).map((p) => ({ ...p })),
    evidence,
    signoffs: signoffList.map((s) => ({
      id: s.id,
      statement: JSON.parse(s.statementJson) as Record<string, unknown>,
      signedText: s.statementJson,
      signature: s.signature,
      publicKeyPem: s.publicKeyPem,
      importedAt: s.importedAt,
      importedBy: s.importedBy,
    })),
    // Whose keys the note names (the sign-offs' signers; exportNote adds the checkpoints'), nobody else's.
    identities: identities
      .list()
      .filter((i) => signers.has(i.name))
      .map(({ name, role, publicKeyPem, fingerprint, registeredAt }) => ({ name, role, publicKeyPem, fingerprint, registeredAt })),
    audit: runSegment(store, runId, run.planHash),
  };
}
