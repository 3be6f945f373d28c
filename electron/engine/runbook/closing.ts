/**
 * Steps 6 and 7: the row-count comparison captured after execution (completion is verified,
 * not assumed: source vs target measured again, read-only, per published partition) and the
 * close, which records the summary and exports the incident note (evidence/ renders it).
 */
import { dryRunKeyChanges } from '../../../shared/approval.ts';
import type { CloseView, ComparisonRow, ComparisonView, ExportedFile } from '../../../shared/contractTypes.ts';
import { totalKeyChange, type KeyChange } from '../../../shared/keyChange.ts';
import { InputError } from '../../../shared/errors.ts';
import type { NoteBundle } from '../evidence/bundle.ts';
import { exportBundle } from '../evidence/exportNote.ts';
import type { UnlockedIdentity } from '../evidence/vault.ts';
import { unlockHere } from './appSignoffs.ts';
import { renderNote } from '../evidence/note/render.ts';
import type { PartitionTarget, ReconcileRow } from '../executor/types.ts';
import { findSnapshot } from '../snapshot/index.ts';
import type { EvidenceRecord, PartitionRecord } from '../store/index.ts';
import { assertJobUnchanged, runSummary } from './planning.ts';
import { openTarget } from './prepare.ts';
import { contextOf, engineConfig, type EngineScope } from './scope.ts';
import { requireStep } from './steps.ts';

interface ComparisonBody {
  ok: boolean;
  reconciliationEvidenceId: number | null;
  rows: ComparisonRow[];
  /** the run's change by key (each partition against its snapshot), or why it was not measured */
  keysWhy?: string | null;
}

/** The `rows` measure of the first validation rule that has one, on each side. */
function rowsMeasure(r: ReconcileRow | undefined): { source: number | null; target: number | null } {
  const check = r?.checks.find((c) => 'rows' in c.source && 'rows' in c.target);
  const num = (v: string | number | null | undefined) => (v === null || v === undefined || v === '' ? null : Number(v));
  return { source: num(check?.source.rows), target: num(check?.target.rows) };
}

function comparisonRow(p: PartitionRecord, r: ReconcileRow | undefined): ComparisonRow {
  const rows = rowsMeasure(r);
  const sourceRows = rows.source ?? (r ? null : p.sourceCount);
  const targetRows = rows.target;
  const problems = r
    ? [...r.problems]
    : p.status === 'published'
      ? []
      : [`partition is ${p.status}, not published${p.error ? `: ${p.error}` : ''}`];
  return {
    key: p.key,
    sourceRows,
    targetRows,
    partitionRows: r ? r.targetCount : p.targetCount,
    markedRows: r ? r.markedRows : null,
    checks: (r?.checks ?? []).map((c) => ({
      rule: c.rule,
      source: c.source,
      target: c.target,
      diffRatio: Number.isFinite(c.diffRatio) ? c.diffRatio : null,
      tolerance: c.tolerance,
      ok: c.ok,
    })),
    difference: sourceRows !== null && targetRows !== null ? targetRows - sourceRows : null,
    ok: problems.length === 0,
    problems,
  };
}

export function comparisonView(e: EvidenceRecord, predicted: KeyChange[] = []): ComparisonView {
  const body = e.body as ComparisonBody;
  const actual = body.rows.flatMap((r) => (r.keys ? [r.keys] : []));
  return {
    evidenceId: e.id,
    reconciliationEvidenceId: body.reconciliationEvidenceId,
    ok: body.ok,
    rows: body.rows,
    keys: {
      actual: actual.length > 0 ? totalKeyChange(actual) : null,
      predicted: predicted.length > 0 ? totalKeyChange(predicted) : null,
      why: body.keysWhy ?? (actual.length > 0 ? null : 'not measured'),
    },
    createdAt: e.createdAt,
  };
}

/** The change by key the dry run on record predicted for the run's plan. */
function predictedKeys(scope: EngineScope, planHash: string): KeyChange[] {
  return dryRunKeyChanges(scope.store.evidence.latest({ planHash, kind: 'dry-run' })?.body);
}

/**
 * What the run changed, by key: each published partition now against the run's snapshot of it.
 * Only where the target can measure it (Postgres) and a snapshot was taken; otherwise why not.
 */
async function changedSinceSnapshot(
  scope: EngineScope,
  target: PartitionTarget,
  runId: string,
  partitions: { key: string; start: string; end: string }[],
): Promise<{ keys: Map<string, KeyChange>; why: string | null }> {
  const keys = new Map<string, KeyChange>();
  if (!target.changeSinceSnapshot) return { keys, why: 'the target cannot measure a change by key (S3)' };
  const snapshot = findSnapshot(scope.store, runId);
  if (!snapshot) return { keys, why: 'no snapshot was taken before the run: there is nothing to compare the partitions with' };
  const taken = new Set(snapshot.body.partitions.map((p) => p.key));
  for (const p of partitions) if (taken.has(p.key)) keys.set(p.key, await target.changeSinceSnapshot(p, runId));
  return { keys, why: null };
}

export async function compareStep(scope: EngineScope, runId: string): Promise<ComparisonView> {
  const ctx = contextOf(scope, runId);
  assertJobUnchanged(ctx);
  requireStep(scope, ctx, 'compare');
  const { store } = scope;
  const { config, env } = engineConfig(scope);
  const partitions = store.partitions.list(runId);
  const target = openTarget(config, ctx.job, ctx.plan.write_mode, env, store);
  const measured = new Map<string, ReconcileRow>();
  const published = partitions
    .filter((p) => p.status === 'published')
    .map((p) => ({ key: p.key, start: p.startAt ?? '', end: p.endAt ?? '' }));
  let changed: Awaited<ReturnType<typeof changedSinceSnapshot>>;
  try {
    await target.prepare();
    for (const p of published) measured.set(p.key, await target.reconcile(p));
    changed = await changedSinceSnapshot(scope, target, runId, published);
  } finally {
    await target.close();
  }
  const rows = partitions.map((p) => {
    const row = comparisonRow(p, measured.get(p.key));
    const keys = changed.keys.get(p.key);
    return keys ? { ...row, keys } : row;
  });
  const reconciliation = store.evidence.list({ runId, kind: 'reconciliation' }).at(-1);
  const body: ComparisonBody = {
    ok: rows.every((r) => r.ok),
    reconciliationEvidenceId: reconciliation?.id ?? null,
    rows,
    keysWhy: changed.why,
  };
  const evidence = store.evidence.add({ runId, planHash: ctx.prepared.planHash, kind: 'row-count-comparison', body, actor: scope.actor });
  return comparisonView(evidence, predictedKeys(scope, ctx.prepared.planHash));
}

export function latestComparison(scope: EngineScope, runId: string): ComparisonView | null {
  const e = scope.store.evidence.list({ runId, kind: 'row-count-comparison' }).at(-1);
  return e ? comparisonView(e, e.planHash ? predictedKeys(scope, e.planHash) : []) : null;
}

/** Who signs an export's head, unlocked with their passphrase; undefined when nobody was named. */
function noteSigner(scope: EngineScope, signer: string | undefined, passphrase: string | undefined): UnlockedIdentity | undefined {
  if (signer === undefined) return undefined;
  if (!passphrase) throw new InputError(`give ${signer}'s passphrase to sign the note's head`, { field: 'passphrase' });
  return unlockHere(scope, signer, passphrase);
}

export function noteFile(scope: EngineScope, runId: string, format: 'md' | 'html', signer?: string, passphrase?: string): ExportedFile {
  const bundle = exportBundle(scope.store, runId, { format, actor: scope.actor, signer: noteSigner(scope, signer, passphrase) });
  return rendered(bundle, runId, format);
}

function rendered(bundle: NoteBundle, runId: string, format: 'md' | 'html'): ExportedFile {
  return {
    fileName: `incident-note-${runId}.${format}`,
    mimeType: format === 'md' ? 'text/markdown' : 'text/html',
    text: renderNote(bundle, format),
  };
}

export function closeStep(scope: EngineScope, args: { runId: string; comment: string; signer?: string; passphrase?: string }): CloseView {
  const { runId, comment } = args;
  const ctx = contextOf(scope, runId);
  requireStep(scope, ctx, 'close');
  // Unlocked before anything is recorded: a wrong passphrase closes nothing.
  const signer = noteSigner(scope, args.signer, args.passphrase);
  const run = runSummary(ctx.run);
  const comparison = latestComparison(scope, runId);
  const summary: [string, string][] = [
    ['Run', `${run.runId} (${run.jobName})`],
    ['Range', ctx.prepared.summary],
    [
      'Outcome',
      `${run.status}: ${run.partitionsPublished}/${run.partitionsTotal} partitions published, ${run.partitionsFailed} failed, ${run.rowsWritten} rows written`,
    ],
    [
      'Row-count comparison',
      comparison
        ? comparison.ok
          ? 'source and target agree on every partition'
          : `${comparison.rows.filter((r) => !r.ok).length} partition(s) differ`
        : 'not captured',
    ],
    ['Executed by', run.executedBy ?? '–'],
    ['Closed by', scope.actor],
  ];
  if (comment.trim() !== '') summary.push(['Comment', comment.trim()]);
  // Recorded before the note is exported, so the note lists its own closing.
  const evidence = scope.store.evidence.add({
    runId,
    planHash: ctx.prepared.planHash,
    kind: 'runbook-closed',
    body: { summary, comment, comparisonEvidenceId: comparison?.evidenceId ?? null },
    actor: scope.actor,
  });
  const bundle = exportBundle(scope.store, runId, { format: 'md', actor: scope.actor, signer });
  summary.push(['Note head', signer ? `signed by ${signer.identity.name}` : 'not signed']);
  return {
    evidenceId: evidence.id,
    summary,
    note: rendered(bundle, runId, 'md'),
    html: rendered(bundle, runId, 'html'),
    signedBy: signer?.identity.name ?? null,
  };
}
