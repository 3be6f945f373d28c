/**
 * Figures of a run from its audit trail and evidence (source article 004): rows per minute of
 * active time, how often it stopped, duplicate keys the validation caught, and the largest
 * validation diff ratio of the reconciliation.
 */
import type { NoteBundle } from '../bundle.ts';

export interface HistoryRow {
  at: string;
  event: string;
  actor: string;
  status: string;
  reason: string;
}

const RUN_EVENTS = /^run\.(created|started|resumed|retuned|paused|halted|failed|succeeded|running)$/;
const STOPPED = new Set(['paused', 'halted', 'canary', 'abandoned', 'failed', 'succeeded']);

export function runHistory(bundle: NoteBundle): HistoryRow[] {
  return bundle.audit
    .filter((e) => e.runId === bundle.runId && RUN_EVENTS.test(e.event))
    .map((e) => ({
      at: e.at,
      event: e.event,
      actor: e.actor,
      status: `${e.fromStatus ?? '–'} → ${e.toStatus ?? '–'}`,
      // a retune says what it changed (`throttle.sleep_ms 200 → 2000`)
      reason: typeof e.detail.haltReason === 'string' ? e.detail.haltReason : typeof e.detail.summary === 'string' ? e.detail.summary : '–',
    }));
}

/** Milliseconds the run spent running: from each start/resume to the next stop. */
export function activeMs(bundle: NoteBundle): number {
  let total = 0;
  let since: number | null = null;
  for (const e of bundle.audit) {
    if (e.runId !== bundle.runId || e.entity !== 'run') continue;
    if (e.toStatus === 'running' && since === null) since = Date.parse(e.at);
    else if (e.toStatus !== null && STOPPED.has(e.toStatus) && since !== null) {
      total += Date.parse(e.at) - since;
      since = null;
    }
  }
  return total;
}

export function metrics(bundle: NoteBundle, reconciliation: { partitions?: Record<string, unknown>[] } | undefined): [string, string][] {
  const run = bundle.run[0] ?? {};
  const rows = Number(run.rowsWritten ?? 0);
  const ms = activeMs(bundle);
  const stops = bundle.audit.filter(
    (e) => e.runId === bundle.runId && e.entity === 'run' && (e.toStatus === 'paused' || e.toStatus === 'halted'),
  ).length;
  let duplicates = 0;
  for (const e of bundle.audit) {
    if (e.runId !== bundle.runId || e.entity !== 'partition' || typeof e.detail.error !== 'string') continue;
    const found = /(\d+) duplicate key/.exec(e.detail.error);
    if (found) duplicates += Number(found[1]);
  }
  const ratios = (reconciliation?.partitions ?? []).flatMap((p) =>
    ((p.checks as { diffRatio?: number }[] | undefined) ?? []).map((c) => Number(c.diffRatio ?? 0)),
  );
  return [
    ['Rows written', String(rows)],
    ['Active time', `${(ms / 1000).toFixed(1)} s`],
    ['Rows per minute', ms > 0 ? Math.round(rows / (ms / 60_000)).toLocaleString('en-US') : '–'],
    ['Stop count', String(stops)],
    ['Duplicate keys caught by validation', String(duplicates)],
    ['Validation diff ratio (max)', ratios.length > 0 ? String(Math.max(...ratios)) : '–'],
    [
      'Partitions',
      `${Number(run.partitionsPublished ?? 0)} published, ${Number(run.partitionsFailed ?? 0)} failed, ${Number(run.partitionsTotal ?? 0)} total`,
    ],
  ];
}
