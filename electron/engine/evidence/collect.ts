/**
 * Gathers everything on record about one run into bundle sections: the run, its plan and job,
 * partitions, evidence (the run's and its plan's dry runs), sign-offs of the plan, the
 * registered identities, and the contiguous audit slice from the first entry that concerns
 * the run up to the head. The slice is contiguous on purpose: a verifier can then check every
 * link, at the cost of showing entries of other runs that happened in between.
 */
import { InputError } from '../../../shared/errors.ts';
import type { Store } from '../store/index.ts';
import type { BundleEvidence, BundleSections } from './bundle.ts';
import { evidenceRepos } from './repos.ts';

export function firstSeqOfRun(store: Store, runId: string, planHash: string): number {
  const seq = store.db
    .prepare<{ runId: string; planHash: string }, number | null>(
      `
      SELECT min(seq) FROM audit_log
      WHERE run_id = @runId
         OR (entity = 'plan' AND entity_id = @planHash)
         OR (entity IN ('evidence', 'signoff') AND json_extract(detail_json, '$.planHash') = @planHash)`,
    )
    .pluck()
    .get({ runId, planHash });
  return seq ?? 1;
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
  const fromSeq = firstSeqOfRun(store, runId, run.planHash);
  return {
    run: [{ ...run }],
    plan: plan
      ? [{ planHash: plan.planHash, requestId: plan.requestId, jobName: plan.jobName, plan: plan.plan, createdAt: plan.createdAt }]
      : [],
    // The jobs table keeps a job's newest definition: include it only if it is the version that ran.
    job: job && job.jobHash === run.jobHash ? [{ jobHash: job.jobHash, definition: job.definition }] : [],
    partitions: store.partitions.list(runId).map((p) => ({ ...p })),
    evidence,
    signoffs: signoffs.forPlan(run.planHash).map((s) => ({
      id: s.id,
      statement: JSON.parse(s.statementJson) as Record<string, unknown>,
      signedText: s.statementJson,
      signature: s.signature,
      publicKeyPem: s.publicKeyPem,
      importedAt: s.importedAt,
      importedBy: s.importedBy,
    })),
    identities: identities
      .list()
      .map(({ name, role, publicKeyPem, fingerprint, registeredAt }) => ({ name, role, publicKeyPem, fingerprint, registeredAt })),
    audit: store.audit.chain({ fromSeq }),
  };
}
