/**
 * The plan form as data, and what it means as you type: the partitions it covers, the
 * automation tier and the red flags — computed here with the same pure rules the engine uses
 * (shared/partitions.ts, tier.ts, redFlags.ts), so the form and the engine never disagree.
 */
import { InputError } from '../../shared/errors.ts';
import { describeRange, partitionRange, rangeDays } from '../../shared/partitions.ts';
import { redFlags, type RedFlag } from '../../shared/redFlags.ts';
import { planSchema, type Job, type Plan, type PlanInput, type WriteMode } from '../../shared/schemas.ts';
import { automationTier, type Tier } from '../../shared/tier.ts';

export interface PlanDraft {
  job: string;
  requestId: string;
  reason: string;
  from: string;
  to: string;
  writeMode: WriteMode | '';
  sleepMs: string;
  concurrency: string;
  maxConsecutiveFailures: string;
  maxRowDiffRatio: string;
  maxLockWaitMs: string;
  criticalLockWaitMs: string;
  maxReplicationLagS: string;
  criticalReplicationLagS: string;
  maxThrottleS: string;
  dutyCycle: string;
  panicFile: string;
  owner: string;
  requestedBy: string;
}

export const EMPTY_DRAFT: PlanDraft = {
  job: '',
  requestId: '',
  reason: '',
  from: '',
  to: '',
  writeMode: '',
  sleepMs: '1000',
  concurrency: '1',
  maxConsecutiveFailures: '3',
  maxRowDiffRatio: '',
  maxLockWaitMs: '',
  criticalLockWaitMs: '',
  maxReplicationLagS: '',
  criticalReplicationLagS: '',
  maxThrottleS: '',
  dutyCycle: '',
  panicFile: '',
  owner: '',
  requestedBy: '',
};

export interface FieldProblem {
  field: string;
  message: string;
}

export interface PlanPreview {
  /** the plan to send, when the form is complete and valid */
  plan: PlanInput | null;
  problems: FieldProblem[];
  /** "61 daily partitions, 2026-05-01 to 2026-06-30 inclusive" */
  partitions: { count: number; summary: string } | null;
  tier: { tier: Tier; reasons: string[] } | null;
  flags: RedFlag[];
}

const num = (text: string): number | undefined => (text.trim() === '' ? undefined : Number(text));

export function draftToPlan(d: PlanDraft, job: Job | null): PlanInput {
  const stop: Record<string, unknown> = {};
  const put = (key: string, value: unknown) => {
    if (value !== undefined) stop[key] = value;
  };
  put('max_consecutive_failures', num(d.maxConsecutiveFailures));
  put('max_row_diff_ratio', num(d.maxRowDiffRatio));
  put('max_lock_wait_ms', num(d.maxLockWaitMs));
  put('critical_lock_wait_ms', num(d.criticalLockWaitMs));
  put('max_replication_lag_s', num(d.maxReplicationLagS));
  put('critical_replication_lag_s', num(d.criticalReplicationLagS));
  put('max_throttle_s', num(d.maxThrottleS));
  put('panic_file', d.panicFile.trim() === '' ? undefined : d.panicFile.trim());
  return {
    request_id: d.requestId.trim(),
    reason: d.reason.trim(),
    job: d.job,
    range: { from: d.from.trim(), to: d.to.trim() },
    write_mode: d.writeMode || job?.write_mode || 'overwrite-partition',
    throttle: {
      sleep_ms: num(d.sleepMs) ?? 0,
      concurrency: num(d.concurrency) ?? 1,
      ...(num(d.dutyCycle) !== undefined ? { duty_cycle: num(d.dutyCycle) } : {}),
    },
    stop,
    ...(d.owner.trim() ? { owner: d.owner.trim() } : {}),
    ...(d.requestedBy.trim() ? { requested_by: d.requestedBy.trim() } : {}),
  };
}

export function previewPlan(d: PlanDraft, job: Job | null): PlanPreview {
  const input = draftToPlan(d, job);
  const problems: FieldProblem[] = [];
  const parsed = planSchema.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push({ field: issue.path.map(String).join('.'), message: issue.message });
  }
  if (!job)
    return {
      plan: null,
      problems: [{ field: 'job', message: 'choose a job' }, ...problems.filter((p) => p.field !== 'job')],
      partitions: null,
      tier: null,
      flags: [],
    };

  // Red flags judge the range and throttle even while other fields are unfinished.
  const lenient = planSchema.safeParse({ ...input, request_id: input.request_id || 'draft', job: job.name });
  const plan: Plan | null = lenient.success ? lenient.data : null;
  let partitions: PlanPreview['partitions'] = null;
  let tier: PlanPreview['tier'] = null;
  let count = 0;
  let list: ReturnType<typeof partitionRange> = [];
  if (d.from.trim() !== '' && d.to.trim() !== '') {
    try {
      list = partitionRange({ from: d.from, to: d.to }, job.unit, job.timezone, { from: 'from', to: 'to' });
      count = list.length;
      partitions = { count, summary: describeRange(list, job.unit) };
      tier = automationTier({
        billing: job.classification.billing,
        externalPartner: job.classification.external_partner,
        downstream: job.classification.downstream,
        rangeDays: rangeDays(list),
        idempotencyProven: false,
      });
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      problems.push({ field: err.details.field ?? 'range', message: err.message });
    }
  } else {
    problems.push({ field: 'range', message: 'give the range: from (inclusive) and to (exclusive)' });
  }
  // With the partitions, the questions that need no measuring (retention) are asked too.
  const flags = plan
    ? redFlags({ plan, job, partitionCount: count, dryRunOnRecord: false, tier: tier?.tier ?? 'manual', partitions: list, now: new Date() })
    : [];
  return { plan: parsed.success && partitions && problems.length === 0 ? input : null, problems, partitions, tier, flags };
}
