/**
 * The canary of a run (shared/canary.ts): whether the run still owes one, the comparison of its
 * partitions with what they held before — by key against the run's snapshot where the target can
 * (h16's change-by-key, PartitionTarget.changeSinceSnapshot), else rows and sums against the
 * target as the dry run measured it — kept as evidence, and the operator's abandon.
 */
import { canarySize, type CanaryBody, type CanaryPartition } from '../../../shared/canary.ts';
import type { CanaryView } from '../../../shared/contractTypes.ts';
import { GateError } from '../../../shared/errors.ts';
import { describeKeyChange } from '../../../shared/keyChange.ts';
import type { PartitionTarget } from '../executor/types.ts';
import { findSnapshot } from '../snapshot/index.ts';
import type { Run, Store } from '../store/index.ts';
import type { DryRunBody } from './dryRun.ts';
import type { PreparedPlan } from './prepare.ts';

/** The run's canary comparison on record: once it is, the canary is behind the run. */
export function canaryEvidence(store: Store, runId: string) {
  return store.evidence.list({ runId, kind: 'canary' }).at(-1);
}

export function canaryView(store: Store, runId: string): CanaryView | null {
  const e = canaryEvidence(store, runId);
  return e ? { ...(e.body as CanaryBody), evidenceId: e.id, createdAt: e.createdAt } : null;
}

/** The hold the runner applies, or none: no canary asked, or this run's canary already passed. */
export function canaryHold(
  store: Store,
  prepared: PreparedPlan,
  target: PartitionTarget,
  actor: string,
): { size: number; onHeld: () => Promise<string> } | undefined {
  const size = canarySize(prepared.plan, prepared.tier, prepared.partitions.length);
  const runId = prepared.plan.request_id;
  if (size === 0 || canaryEvidence(store, runId)) return undefined;
  return {
    size,
    onHeld: async () => {
      const body = await compareCanary(store, prepared, target);
      store.evidence.add({ runId, planHash: prepared.planHash, kind: 'canary', body, actor });
      return canarySummary(body);
    },
  };
}

/** The canary's published partitions against what they held before the run. */
export async function compareCanary(store: Store, prepared: PreparedPlan, target: PartitionTarget): Promise<CanaryBody> {
  const runId = prepared.plan.request_id;
  const published = store.partitions.list(runId).filter((p) => p.status === 'published');
  const snapshot = findSnapshot(store, runId);
  const snapped = new Set(snapshot?.body.jobHash === prepared.jobHash ? snapshot.body.partitions.map((p) => p.key) : []);
  const dry = store.evidence
    .list({ planHash: prepared.planHash, kind: 'dry-run' })
    .reverse()
    .find((e) => (e.body as Partial<DryRunBody> | null)?.jobHash === prepared.jobHash);
  const dryRows = new Map(((dry?.body as DryRunBody | undefined)?.partitions ?? []).map((r) => [r.partition.key, r]));
  const partitions: CanaryPartition[] = [];
  for (const p of published) {
    const partition = { key: p.key, start: p.startAt ?? '', end: p.endAt ?? '' };
    if (snapped.has(p.key) && target.changeSinceSnapshot) {
      const keys = await target.changeSinceSnapshot(partition, runId);
      const before: CanaryPartition['before'] = { rows: keys.before };
      const after: CanaryPartition['after'] = { rows: keys.after };
      for (const m of keys.measures) {
        before[m.column] = m.before;
        after[m.column] = m.after;
      }
      partitions.push({ key: p.key, basis: 'snapshot', before, after, keys });
      continue;
    }
    const now = (await target.measure(partition)).target;
    const was = dryRows.get(p.key)?.target ?? null;
    partitions.push({ key: p.key, basis: was ? 'dry run' : 'nothing on record', before: was, after: now });
  }
  return { runId, size: published.length, partitions, reconciled: true };
}

/** "canary: 2 partition(s) published, reconciled and compared: 2026-05-01 3 added, 0 removed, 12 changed …" */
export function canarySummary(body: CanaryBody): string {
  const parts = body.partitions.map((p) => {
    if (p.keys) return `${p.key} ${describeKeyChange(p.keys)}`;
    const rows = (m: CanaryPartition['before']) => (m ? String(m.rows ?? m.records ?? '?') : '?');
    return `${p.key} ${rows(p.before)} → ${rows(p.after)} rows (against the ${p.basis})`;
  });
  return `canary: ${body.size} partition(s) published, reconciled and compared — ${parts.join('; ')}. Continue to run the rest, or abandon`;
}

/** Ends a run held after its canary, for good: nothing more is written; what the canary wrote stays (restore it from the snapshot). */
export function abandonRun(store: Store, runId: string, actor: string, reason: string): Run {
  const run = store.runs.get(runId);
  if (!run) throw new GateError(`no run "${runId}" in ${store.file}`, ['check the id with `run-backfill status`']);
  if (run.status !== 'canary')
    throw new GateError(`run ${runId} is ${run.status}, not held after its canary: only a canary can be abandoned`, [
      run.status === 'abandoned'
        ? 'it was abandoned already'
        : 'stop a running run at a partition boundary instead (Ctrl-C, or Stop in the app)',
    ]);
  return store.runs.setStatus(runId, 'abandoned', {
    actor,
    haltReason: `abandoned after its canary by ${actor}${reason.trim() ? `: ${reason.trim()}` : ''}`,
  });
}
