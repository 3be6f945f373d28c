/**
 * The run's figures (source article 004): rows per minute of active time, checkpoint age,
 * stop count, time throttled and throttle count, duplicate keys on the target and the largest
 * validation diff ratio. Computed from the ledger, the audit log and the reconciliation
 * evidence — live or afterwards.
 */
import type { Store } from '../store/index.ts';
import type { ReconcileRow } from './types.ts';
import { throttleEpisodes, throttleTotals, type ThrottleEpisode } from './throttleEpisodes.ts';

export interface RunMetrics {
  rowsWritten: number;
  activeMs: number;
  rowsPerMinute: number;
  /** seconds since the last partition was checkpointed (null before the first) */
  checkpointAgeS: number | null;
  stopCount: number;
  /** time spent throttled (waiting for signals to settle), and how many episodes */
  throttledMs: number;
  throttleCount: number;
  /** the episode going on now, if the run is throttled */
  throttledNow: ThrottleEpisode | null;
  /** from the last reconciliation; null before one ran */
  duplicateKeys: number | null;
  validationDiffRatio: number | null;
}

const STOPPED = new Set(['paused', 'halted', 'canary', 'abandoned', 'failed', 'succeeded']);

export function runMetrics(store: Store, runId: string, now: Date = new Date()): RunMetrics {
  const run = store.runs.get(runId);
  const runAudit = store.audit.list({ runId }).filter((e) => e.entity === 'run');
  const audit = runAudit.filter((e) => e.toStatus !== null);
  const episodes = throttleEpisodes(runAudit, now.getTime());
  let activeMs = 0;
  let since: number | null = null;
  let stopCount = 0;
  for (const e of audit) {
    if (e.toStatus === 'running' && since === null) since = Date.parse(e.at);
    else if (e.toStatus !== null && STOPPED.has(e.toStatus)) {
      if (since !== null) activeMs += Date.parse(e.at) - since;
      since = null;
      if (e.toStatus === 'paused' || e.toStatus === 'halted') stopCount += 1;
    }
  }
  if (since !== null) activeMs += now.getTime() - since;
  const finished = store.partitions
    .list(runId)
    .map((p) => (p.status === 'published' ? p.finishedAt : null))
    .filter((t): t is string => t !== null)
    .sort();
  const last = finished.at(-1);
  const reconciliation = store.evidence.list({ runId, kind: 'reconciliation' }).at(-1)?.body as { partitions?: ReconcileRow[] } | undefined;
  const rows = reconciliation?.partitions ?? null;
  const rowsWritten = run?.rowsWritten ?? 0;
  return {
    rowsWritten,
    activeMs,
    rowsPerMinute: activeMs > 0 ? Math.round(rowsWritten / (activeMs / 60_000)) : 0,
    checkpointAgeS: last ? Math.max(0, Math.round((now.getTime() - Date.parse(last)) / 1000)) : null,
    stopCount,
    ...throttleTotals(episodes),
    throttledNow: episodes.at(-1)?.outcome === 'open' ? (episodes.at(-1) ?? null) : null,
    duplicateKeys: rows ? rows.reduce((n, r) => n + (r.duplicateKeys ?? 0), 0) : null,
    validationDiffRatio: rows
      ? Math.max(0, ...rows.flatMap((r) => r.checks.map((c) => (Number.isFinite(c.diffRatio) ? c.diffRatio : 1))))
      : null,
  };
}
