/**
 * The History view: past runs, each with its timeline (the audit log), evidence and partition
 * grid. Reads the local SQLite file only, so it works with every network unplugged. Paged by
 * the store, so 10,000 runs never travel at once.
 */
import type { CallArgs } from '../../../shared/contract.ts';
import type { EvidenceView, HistoryPage, RunDetail, TimelineEntry } from '../../../shared/contractTypes.ts';
import type { Store } from '../store/index.ts';
import { ServiceError } from './secrets.ts';
import { partitionCell } from './steps.ts';
import { runSummary } from './planning.ts';

/** `to` is a day, inclusive: runs created before the next midnight (UTC). */
function nextDay(day: string): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

export function listRuns(store: Store, q: CallArgs<'history:list'>): HistoryPage {
  const search = q.search?.trim();
  const params = {
    job: q.job ?? null,
    status: q.status ?? null,
    from: q.from ? `${q.from}T00:00:00.000Z` : null,
    to: q.to ? nextDay(q.to) : null,
    pattern: search ? `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null,
  };
  const runs = store.history.runs(params, { limit: q.limit, offset: q.offset }).map(runSummary);
  return { runs, total: store.history.count(params) };
}

export function runDetail(store: Store, runId: string): RunDetail {
  const run = store.runs.get(runId);
  if (!run) throw new ServiceError(`no run "${runId}" in ${store.file}`, 'not-found', 'search History for it');
  const seen = new Set<number>();
  const evidence = [...store.evidence.list({ planHash: run.planHash }), ...store.evidence.list({ runId })]
    .filter((e) => !seen.has(e.id) && seen.add(e.id))
    .sort((a, b) => a.id - b.id)
    .map((e) => ({ id: e.id, kind: e.kind, createdAt: e.createdAt, bodySha256: e.bodySha256 }));
  const timeline = store.history.timeline(runId, run.planHash).map((a): TimelineEntry => ({
    seq: a.seq,
    at: a.at,
    event: a.event,
    entity: a.entity,
    entityId: a.entityId,
    actor: a.actor,
    fromStatus: a.fromStatus,
    toStatus: a.toStatus,
    detail: a.detailJson === '{}' ? '' : a.detailJson,
  }));
  return { run: runSummary(run), partitions: store.partitions.list(runId).map(partitionCell), evidence, timeline };
}

export function evidenceById(store: Store, id: number): EvidenceView {
  const e = store.evidence.get(id);
  if (!e) throw new ServiceError(`no evidence #${id} in ${store.file}`, 'not-found');
  return { id: e.id, runId: e.runId, planHash: e.planHash, kind: e.kind, createdAt: e.createdAt, bodySha256: e.bodySha256, body: e.body };
}
