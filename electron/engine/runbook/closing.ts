/**
 * Steps 6 and 7: the row-count comparison captured after execution (completion is verified,
 * not assumed: source vs target measured again, read-only, per published partition) and the
 * close, which records the summary and exports the incident note (evidence/ renders it).
 */
import type { CloseView, ComparisonRow, ComparisonView, ExportedFile } from '../../../shared/contractTypes.ts';
import { exportBundle } from '../evidence/exportNote.ts';
import { renderNote } from '../evidence/note/render.ts';
import type { ReconcileRow } from '../executor/types.ts';
import type { EvidenceRecord, PartitionRecord } from '../store/index.ts';
import { assertJobUnchanged, runSummary } from './planning.ts';
import { openTarget } from './prepare.ts';
import { contextOf, engineConfig, type EngineScope } from './scope.ts';
import { requireStep } from './steps.ts';

interface ComparisonBody {
  ok: boolean;
  reconciliationEvidenceId: number | null;
  rows: ComparisonRow[];
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

export function comparisonView(e: EvidenceRecord): ComparisonView {
  const body = e.body as ComparisonBody;
  return {
    evidenceId: e.id,
    reconciliationEvidenceId: body.reconciliationEvidenceId,
    ok: body.ok,
    rows: body.rows,
    createdAt: e.createdAt,
  };
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
  try {
    await target.prepare();
    for (const p of partitions) {
      if (p.status === 'published') measured.set(p.key, await target.reconcile({ key: p.key, start: p.startAt ?? '', end: p.endAt ?? '' }));
    }
  } finally {
    await target.close();
  }
  const rows = partitions.map((p) => comparisonRow(p, measured.get(p.key)));
  const reconciliation = store.evidence.list({ runId, kind: 'reconciliation' }).at(-1);
  const body: ComparisonBody = { ok: rows.every((r) => r.ok), reconciliationEvidenceId: reconciliation?.id ?? null, rows };
  const evidence = store.evidence.add({ runId, planHash: ctx.prepared.planHash, kind: 'row-count-comparison', body, actor: scope.actor });
  return comparisonView(evidence);
}

export function latestComparison(scope: EngineScope, runId: string): ComparisonView | null {
  const e = scope.store.evidence.list({ runId, kind: 'row-count-comparison' }).at(-1);
  return e ? comparisonView(e) : null;
}

export function noteFile(scope: EngineScope, runId: string, format: 'md' | 'html'): ExportedFile {
  const bundle = exportBundle(scope.store, runId, { format, actor: scope.actor });
  return {
    fileName: `incident-note-${runId}.${format}`,
    mimeType: format === 'md' ? 'text/markdown' : 'text/html',
    text: renderNote(bundle, format),
  };
}

export function closeStep(scope: EngineScope, runId: string, comment: string): CloseView {
  const ctx = contextOf(scope, runId);
  requireStep(scope, ctx, 'close');
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
  return { evidenceId: evidence.id, summary, note: noteFile(scope, runId, 'md') };
}
