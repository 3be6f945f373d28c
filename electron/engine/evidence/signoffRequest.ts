/**
 * Builds the sign-off request of a plan from the local store: the plan as saved, the job it
 * runs, and the newest dry run of that plan (the impact evidence) with their hashes.
 */
import { InputError } from '../../../shared/errors.ts';
import type { Approval } from '../../../shared/approval.ts';
import type { Job } from '../../../shared/schemas.ts';
import { jobHash } from '../plan/hash.ts';
import type { Store } from '../store/index.ts';
import { REQUEST_FORMAT, type SignoffRequest } from './signoff.ts';

/** The plan hash a run id names: the run's plan, or the newest plan saved under that request id (a dry run saves it). */
export function planHashForRequest(store: Store, requestId: string): string {
  const run = store.runs.get(requestId);
  if (run) return run.planHash;
  const hash = store.db
    .prepare<[string], string>('SELECT plan_hash FROM plans WHERE request_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1')
    .pluck()
    .get(requestId);
  if (hash === undefined) {
    throw new InputError(
      `no run and no saved plan "${requestId}" in ${store.file}: dry-run the plan first (add --dry-run to the run command)`,
      {
        field: '--run-id',
        value: requestId,
      },
    );
  }
  return hash;
}

export function buildSignoffRequest(
  store: Store,
  input: { planHash: string; job: Job; operator: string; at?: Date; approves?: Approval },
): SignoffRequest {
  const { planHash } = input;
  const saved = store.plans.get(planHash);
  if (!saved)
    throw new InputError(
      `plan ${planHash.slice(0, 12)}… is not on record in ${store.file}: dry-run it first (add --dry-run to the run command)`,
      { value: planHash },
    );
  const impact = store.evidence.latest({ planHash, kind: 'dry-run' });
  if (!impact) {
    throw new InputError(
      `no dry run on record for plan ${planHash.slice(0, 12)}… (${saved.requestId}): a lead signs the plan together with its measured impact — dry-run it first`,
      {
        value: planHash,
      },
    );
  }
  const bodyJson = store.db.prepare<[number], string>('SELECT body_json FROM evidence WHERE id = ?').pluck().get(impact.id) ?? '';
  const body = impact.body as { jobHash?: string; summary?: string; tier?: string };
  const currentJob = jobHash(input.job);
  if (body.jobHash !== currentJob) {
    throw new InputError(
      `job "${input.job.name}" changed since the dry run of plan ${planHash.slice(0, 12)}… (dry run measured ${String(body.jobHash).slice(0, 12)}…, the job file is now ${currentJob.slice(0, 12)}…): dry-run again`,
      {
        field: 'job',
        value: input.job.name,
      },
    );
  }
  const request: SignoffRequest = {
    format: REQUEST_FORMAT,
    createdAt: (input.at ?? new Date()).toISOString(),
    requestedBy: input.operator,
    requestId: saved.requestId,
    planHash,
    plan: saved.plan,
    jobHash: currentJob,
    job: input.job,
    impactHash: impact.bodySha256,
    impact: { evidenceId: impact.id, kind: 'dry-run', createdAt: impact.createdAt, bodyJson },
    summary: body.summary ?? '',
    tier: body.tier ?? '',
    ...(input.approves ? { approves: input.approves as unknown as SignoffRequest['approves'] } : {}),
  };
  store.audit.append({
    runId: store.runs.get(saved.requestId) ? saved.requestId : null,
    entity: 'plan',
    entityId: planHash,
    event: 'signoff.requested',
    actor: input.operator,
    detail: { requestId: saved.requestId, planHash, jobHash: currentJob, impactHash: impact.bodySha256 },
  });
  return request;
}
