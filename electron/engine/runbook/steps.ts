/**
 * Steps 1–3 of the runbook (sanity, snapshot, impact scope) and the runbook's state: the facts
 * on record for a run and, from them, which step is unlocked (shared/runbookSteps.ts). Each
 * action refuses when its step is locked: the gate is here, not only in the UI.
 */
import type { DryRunView, PartitionCell, RunbookView, SanityView, SnapshotView } from '../../../shared/contractTypes.ts';
import { GateError } from '../../../shared/errors.ts';
import { totalKeyChange } from '../../../shared/keyChange.ts';
import { runbookSteps, stepOpen, STEP_TITLES, type StepFacts, type StepId, type StepView } from '../../../shared/runbookSteps.ts';
import { dryRun, type DryRunBody } from './dryRun.ts';
import { mergeFlags, type RedFlag } from '../../../shared/redFlags.ts';
import { notifyDryRunReady } from '../notify/dryRunReady.ts';
import { runSanityChecks, type SanityResult } from '../safety/sanity.ts';
import { findSnapshot, takeSnapshot } from '../snapshot/index.ts';
import type { EvidenceRecord, PartitionRecord, Store } from '../store/index.ts';
import { signoffStatus } from './appSignoffs.ts';
import { assertJobUnchanged, jobSummary, runSummary, type RunContext } from './planning.ts';
import { openTarget } from './prepare.ts';
import { contextOf, engineConfig, now, type EngineScope } from './scope.ts';

interface Bodied {
  jobHash?: string;
}

/** The newest evidence of a kind for the plan, measured on the run's job version. */
function current(store: Store, ctx: RunContext, kind: string): EvidenceRecord | undefined {
  const all = store.evidence.list({ planHash: ctx.prepared.planHash, kind });
  return all.reverse().find((e) => (e.body as Bodied | null)?.jobHash === ctx.run.jobHash);
}

function latestForRun(store: Store, runId: string, kind: string): EvidenceRecord | undefined {
  return store.evidence.list({ runId, kind }).at(-1);
}

export function stepFacts(scope: EngineScope, ctx: RunContext): StepFacts {
  const { store } = scope;
  const { run } = ctx;
  const sanity = current(store, ctx, 'sanity-check');
  const sanityBody = sanity?.body as { blocked?: boolean; results?: SanityResult[] } | undefined;
  const snapshot = findSnapshot(store, run.runId);
  const dry = current(store, ctx, 'dry-run');
  const signoff = signoffStatus(scope, ctx);
  const comparison = latestForRun(store, run.runId, 'row-count-comparison');
  const closed = latestForRun(store, run.runId, 'runbook-closed');
  return {
    sanity: sanity
      ? {
          evidenceId: sanity.id,
          blocked: sanityBody?.blocked === true,
          failed: (sanityBody?.results ?? []).filter((r) => !r.ok && r.severity === 'fail').map((r) => `${r.rule} (${r.message})`),
        }
      : null,
    snapshot:
      snapshot && snapshot.body.jobHash === run.jobHash ? { evidenceId: snapshot.id, partitions: snapshot.body.partitions.length } : null,
    dryRun: dry ? { evidenceId: dry.id, summary: ctx.prepared.summary } : null,
    signoff: { required: signoff.required, valid: signoff.valid, problems: signoff.problems },
    run: {
      status: run.status,
      live: scope.isLive(run.runId),
      published: run.partitionsPublished,
      failed: run.partitionsFailed,
      total: run.partitionsTotal,
      haltReason: run.haltReason,
    },
    comparison: comparison ? { evidenceId: comparison.id, ok: (comparison.body as { ok?: boolean }).ok === true } : null,
    closed: closed ? { evidenceId: closed.id } : null,
    unavailable: {},
  };
}

export function stepsOf(scope: EngineScope, ctx: RunContext): StepView[] {
  return runbookSteps(stepFacts(scope, ctx));
}

/** Refuses an action whose step is locked, naming the step that must hold first. */
export function requireStep(scope: EngineScope, ctx: RunContext, id: StepId): void {
  const steps = stepsOf(scope, ctx);
  if (!stepOpen(steps, id)) {
    const step = steps.find((s) => s.id === id);
    throw new GateError(`"${STEP_TITLES[id]}" is not unlocked yet`, [step?.detail ?? 'an earlier step does not hold']);
  }
}

export function partitionCell(p: PartitionRecord): PartitionCell {
  return {
    key: p.key,
    status: p.status,
    rows: p.rowsWritten,
    attempt: p.attempt,
    error: p.error,
    sourceCount: p.sourceCount,
    targetCount: p.targetCount,
    checksum: p.checksum,
    startedAt: p.startedAt,
    finishedAt: p.finishedAt,
    durationMs: p.durationMs,
  };
}

/** The plan's flags and the latest dry run's answers (its per-partition flags replace the plan's early ones). */
function viewFlags(scope: EngineScope, ctx: RunContext): RedFlag[] {
  const body = current(scope.store, ctx, 'dry-run')?.body as DryRunBody | undefined;
  const plan = ctx.prepared.flags;
  return body?.redFlags
    ? mergeFlags(
        plan.filter((f) => !f.partitions),
        body.redFlags,
      )
    : plan;
}

export function runbookView(scope: EngineScope, runId: string): RunbookView {
  const ctx = contextOf(scope, runId);
  const { prepared } = ctx;
  return {
    run: runSummary(ctx.run),
    plan: ctx.plan,
    job: jobSummary(ctx.job),
    summary: prepared.summary,
    tier: prepared.tier,
    tierReasons: prepared.tierReasons,
    flags: viewFlags(scope, ctx),
    steps: stepsOf(scope, ctx),
    live: scope.isLive(runId),
    partitions: scope.store.partitions.list(runId).map(partitionCell),
  };
}

export async function sanityStep(scope: EngineScope, runId: string): Promise<SanityView> {
  const ctx = contextOf(scope, runId);
  assertJobUnchanged(ctx);
  requireStep(scope, ctx, 'sanity');
  const { config, env } = engineConfig(scope);
  const report = await runSanityChecks(ctx.prepared, config, scope.store, env);
  return { evidenceId: report.evidenceId, blocked: report.blocked, results: report.results, createdAt: now() };
}

export async function snapshotStep(scope: EngineScope, runId: string): Promise<SnapshotView> {
  const ctx = contextOf(scope, runId);
  assertJobUnchanged(ctx);
  requireStep(scope, ctx, 'snapshot');
  const { config, env } = engineConfig(scope);
  const total = ctx.prepared.partitions.length;
  let done = 0;
  const outcome = await takeSnapshot(
    {
      config,
      job: ctx.job,
      jobHash: ctx.prepared.jobHash,
      planHash: ctx.prepared.planHash,
      runId,
      partitions: ctx.prepared.partitions,
      store: scope.store,
      env,
      actor: scope.actor,
    },
    (row) => scope.emit({ kind: 'step', runId, at: now(), step: 'snapshot', done: ++done, total, key: row.partition.key }),
  );
  return {
    evidenceId: outcome.evidenceId,
    location: outcome.location,
    target: outcome.target,
    partitions: outcome.partitions.map((p) => ({ key: p.partition.key, items: p.items, bytes: p.bytes, checksum: p.checksum })),
    createdAt: now(),
  };
}

export async function dryRunStep(scope: EngineScope, runId: string): Promise<DryRunView> {
  const ctx = contextOf(scope, runId);
  assertJobUnchanged(ctx);
  requireStep(scope, ctx, 'impact');
  const { config, env } = engineConfig(scope);
  const total = ctx.prepared.partitions.length;
  const target = openTarget(config, ctx.job, ctx.plan.write_mode, env, scope.store);
  const result = await dryRun({
    prepared: ctx.prepared,
    target,
    store: scope.store,
    config,
    env,
    jobsDir: scope.workspace.info.jobsDir,
    onRow: (row, index) => scope.emit({ kind: 'step', runId, at: now(), step: 'dry-run', done: index + 1, total, key: row.partition.key }),
  });
  const body: DryRunBody = {
    jobHash: ctx.prepared.jobHash,
    summary: ctx.prepared.summary,
    tier: ctx.prepared.tier,
    partitions: result.rows,
    flags: result.answers.partitions,
    redFlags: result.answers.flags,
    estimate: result.answers.estimate,
    impact: result.impact,
  };
  // Told in the background: the step's answer does not wait for the notify targets.
  void notifyDryRunReady({ config, env, store: scope.store, prepared: ctx.prepared, rows: result.rows, actor: scope.actor });
  return dryRunView(ctx, result.evidenceId, body, now(), target.label);
}

/** A dry run on record as the app shows it; one recorded before the questions were asked shows none. */
export function dryRunView(ctx: RunContext, evidenceId: number, body: DryRunBody, createdAt: string, target: string): DryRunView {
  const flags = body.flags ?? [];
  const keys = body.partitions.flatMap((r) => (r.keys ? [r.keys] : []));
  return {
    evidenceId,
    summary: ctx.prepared.summary,
    downstream: ctx.job.classification.downstream,
    target,
    rows: body.partitions.map((r) => ({
      key: r.partition.key,
      source: r.source,
      target: r.target,
      change: r.change,
      ...(r.keys ? { keys: r.keys } : {}),
      ms: typeof r.ms === 'number' ? r.ms : null,
      flags: flags.filter((f) => f.key === r.partition.key),
    })),
    keys: keys.length > 0 ? totalKeyChange(keys) : null,
    redFlags: body.redFlags ?? [],
    estimate: body.estimate ?? null,
    impact: body.impact ?? null,
    createdAt,
  };
}

/** The views of evidence already on record, so a step's result can be opened again later. */
export function recordedSteps(
  scope: EngineScope,
  runId: string,
): { sanity: SanityView | null; snapshot: SnapshotView | null; dryRun: DryRunView | null } {
  const ctx = contextOf(scope, runId);
  const { store } = scope;
  const sanity = current(store, ctx, 'sanity-check');
  const snap = findSnapshot(store, runId);
  const dry = current(store, ctx, 'dry-run');
  const sanityBody = sanity?.body as { blocked: boolean; results: SanityResult[] } | undefined;
  const dryBody = dry?.body as DryRunBody | undefined;
  return {
    sanity:
      sanity && sanityBody
        ? { evidenceId: sanity.id, blocked: sanityBody.blocked, results: sanityBody.results, createdAt: sanity.createdAt }
        : null,
    snapshot: snap
      ? {
          evidenceId: snap.id,
          location: snap.body.location,
          target: snap.body.target,
          partitions: snap.body.partitions.map((p) => ({ key: p.key, items: p.items, bytes: p.bytes, checksum: p.checksum })),
          createdAt: snap.createdAt,
        }
      : null,
    dryRun: dry && dryBody ? dryRunView(ctx, dry.id, dryBody, dry.createdAt, jobSummary(ctx.job).target) : null,
  };
}
