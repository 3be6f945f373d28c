/**
 * The runbook's seven steps (docs/design.md §1, source article 001) and when each is unlocked: only
 * when the one before it holds. Pure, so the engine decides it (the renderer only shows it)
 * and tests can walk every case. A step the build cannot perform says so plainly and is
 * passed over rather than faked.
 */
export const STEP_IDS = ['sanity', 'snapshot', 'impact', 'signoff', 'execute', 'compare', 'close'] as const;
export type StepId = (typeof STEP_IDS)[number];

/** locked: an earlier step does not hold yet · blocked: it ran and refuses · active: under way */
export type StepStatus = 'locked' | 'ready' | 'active' | 'blocked' | 'done' | 'unavailable';

export const STEP_TITLES: Record<StepId, string> = {
  sanity: 'Source sanity check',
  snapshot: 'Snapshot backup',
  impact: 'Impact scope',
  signoff: 'Lead sign-off',
  execute: 'Execute',
  compare: 'Row-count comparison',
  close: 'Close',
};

export interface StepView {
  id: StepId;
  title: string;
  status: StepStatus;
  /** one line: what holds, what blocks, or what to do next */
  detail: string;
  evidenceId: number | null;
}

export interface StepFacts {
  sanity: { evidenceId: number; blocked: boolean; failed: string[] } | null;
  snapshot: { evidenceId: number; partitions: number } | null;
  dryRun: { evidenceId: number; summary: string } | null;
  signoff: { required: boolean; valid: { signer: string } | null; problems: string[] };
  run: {
    status: 'planned' | 'running' | 'paused' | 'halted' | 'canary' | 'abandoned' | 'failed' | 'succeeded';
    live: boolean;
    published: number;
    failed: number;
    total: number;
    haltReason: string | null;
  };
  comparison: { evidenceId: number; ok: boolean } | null;
  closed: { evidenceId: number } | null;
  /** steps this build cannot perform, with the reason shown to the user */
  unavailable: Partial<Record<StepId, string>>;
}

type Own = Omit<StepView, 'id' | 'title'>;

function own(f: StepFacts, id: StepId): Own {
  const none = { evidenceId: null };
  switch (id) {
    case 'sanity':
      if (!f.sanity)
        return { status: 'ready', detail: "Run the job's quality rules on the source before anything is recomputed from it.", ...none };
      if (f.sanity.blocked)
        return {
          status: 'blocked',
          detail: `A fail-severity rule did not hold: ${f.sanity.failed.join('; ')}. Fix the source, then check again.`,
          evidenceId: f.sanity.evidenceId,
        };
      return { status: 'done', detail: 'The source passed its quality rules.', evidenceId: f.sanity.evidenceId };
    case 'snapshot':
      if (!f.snapshot) return { status: 'ready', detail: 'Copy the partitions about to be overwritten, so they can be restored.', ...none };
      return { status: 'done', detail: `${f.snapshot.partitions} partition(s) copied.`, evidenceId: f.snapshot.evidenceId };
    case 'impact':
      if (!f.dryRun) return { status: 'ready', detail: 'Measure every partition read-only: what the run would change.', ...none };
      return { status: 'done', detail: `Dry run on record: ${f.dryRun.summary}.`, evidenceId: f.dryRun.evidenceId };
    case 'signoff':
      if (f.signoff.valid) return { status: 'done', detail: `Signed off by ${f.signoff.valid.signer}.`, ...none };
      if (!f.signoff.required)
        return { status: 'done', detail: 'Not required for this automation tier (a sign-off may still be recorded).', ...none };
      if (f.signoff.problems.length > 0) return { status: 'blocked', detail: f.signoff.problems.join(' · '), ...none };
      return { status: 'ready', detail: 'A lead other than the operator signs this exact plan and its dry run.', ...none };
    case 'execute':
      return executeStep(f.run);
    case 'compare':
      if (!f.comparison) return { status: 'ready', detail: 'Capture source vs target per partition as evidence.', ...none };
      return {
        status: 'done',
        detail: f.comparison.ok ? 'Source and target agree on every partition.' : 'Captured: some partitions differ (highlighted).',
        evidenceId: f.comparison.evidenceId,
      };
    case 'close':
      if (!f.closed) return { status: 'ready', detail: 'Summarise the run and export the incident note.', ...none };
      return { status: 'done', detail: 'Closed; the incident note was exported.', evidenceId: f.closed.evidenceId };
  }
}

function executeStep(run: StepFacts['run']): Own {
  const none = { evidenceId: null };
  const progress = `${run.published}/${run.total} published${run.failed > 0 ? `, ${run.failed} failed` : ''}`;
  if (run.live) return { status: 'active', detail: 'Executing now: the numbers below are live.', ...none };
  switch (run.status) {
    case 'planned':
      return { status: 'ready', detail: 'Execute partition by partition; pause, resume or stop at a partition boundary.', ...none };
    case 'running':
      return {
        status: 'active',
        detail: `Interrupted: no executor is driving it (${progress}). Resume continues where it stopped.`,
        ...none,
      };
    case 'paused':
      return { status: 'active', detail: `Paused (${progress}). Resume continues where it stopped.`, ...none };
    case 'halted':
      return {
        status: 'active',
        detail: `Halted: ${run.haltReason ?? 'a stop condition fired'} (${progress}). Resume when it is safe.`,
        ...none,
      };
    case 'canary':
      return {
        status: 'active',
        detail: `Held after its canary (${progress}): read the canary's comparison, then continue the run or abandon it.`,
        ...none,
      };
    case 'abandoned':
      return { status: 'done', detail: `Abandoned after its canary: ${run.haltReason ?? progress}.`, ...none };
    case 'failed':
      return {
        status: 'done',
        detail: `Finished with problems: ${run.haltReason ?? progress}. Resume to retry, or compare and close.`,
        ...none,
      };
    case 'succeeded':
      return { status: 'done', detail: `Succeeded: ${progress}, reconciled.`, ...none };
  }
}

/** Each step's status, in order; a step is locked until the one before it is done (or not in this build). */
export function runbookSteps(facts: StepFacts): StepView[] {
  const views: StepView[] = [];
  let open = true;
  let gate = '';
  for (const id of STEP_IDS) {
    const title = STEP_TITLES[id];
    const unavailable = facts.unavailable[id];
    if (unavailable !== undefined) {
      views.push({ id, title, status: 'unavailable', detail: `Not available in this build: ${unavailable}`, evidenceId: null });
      continue; // passed over, never faked: the next step's gate is the one before this one
    }
    const mine = own(facts, id);
    if (!open && mine.status !== 'done') {
      views.push({ id, title, status: 'locked', detail: `Unlocked when "${gate}" holds.`, evidenceId: null });
    } else {
      views.push({ id, title, ...mine });
    }
    if (open && mine.status !== 'done') gate = title;
    open = open && mine.status === 'done';
  }
  return views;
}

/** Whether the step may be performed now (the engine refuses otherwise). */
export function stepOpen(steps: readonly StepView[], id: StepId): boolean {
  const step = steps.find((s) => s.id === id);
  return step !== undefined && step.status !== 'locked' && step.status !== 'unavailable';
}
