/**
 * The History view: past runs, each with its timeline (the audit log), evidence and partition
 * grid. Reads the local SQLite file only, so it works with every network unplugged. Paged by
 * the store, so 10,000 runs never travel at once.
 */
import type { CallArgs } from '../../../shared/contract.ts';
import type { EvidenceView, HistoryPage, RunDetail, RunSummary, TimelineEntry } from '../../../shared/contractTypes.ts';
import type { Store } from '../store/index.ts';
import type { AuditRow as StoreAuditRow, RunRow as StoreRunRow } from '../store/rows.ts';
import { ServiceError } from './secrets.ts';
import { partitionCell } from './steps.ts';
import { runSummary } from './planning.ts';

/** The ledger's rows as the store defines them; a run's status narrowed to the contract's. */
type RunRow = Omit<StoreRunRow, 'status'> & { status: RunSummary['status'] };
/** The timeline selects every audit column but run_id. */
type AuditRow = Omit<StoreAuditRow, 'run_id'>;

const FILTER = `
  FROM runs
  WHERE (@job IS NULL OR job_name = @job)
    AND (@status IS NULL OR status = @status)
    AND (@from IS NULL OR created_at >= @from)
    AND (@to IS NULL OR created_at < @to)
    AND (@pattern IS NULL OR run_id LIKE @pattern ESCAPE '\\' OR job_name LIKE @pattern ESCAPE '\\'
         OR plan_hash LIKE @pattern ESCAPE '\\' OR requested_by LIKE @pattern ESCAPE '\\'
         OR executed_by LIKE @pattern ESCAPE '\\' OR halt_reason LIKE @pattern ESCAPE '\\')`;

const cache = new WeakMap<Store, ReturnType<typeof prepare>>();

function prepare(store: Store) {
  return {
    page: store.db.prepare<Record<string, unknown>, RunRow>(
      `SELECT * ${FILTER} ORDER BY created_at DESC, run_id DESC LIMIT @limit OFFSET @offset`,
    ),
    count: store.db.prepare<Record<string, unknown>, number>(`SELECT count(*) ${FILTER}`).pluck(),
    // The run's own entries (indexed), and around them its plan's: the sanity check, dry run and
    // sign-off are bound to the plan, not the run. Only the run's own seq range is searched, so
    // opening a run never scans the whole log; a CLI dry run taken long before the run was
    // created shows in the Evidence tab rather than here.
    timeline: store.db.prepare<{ runId: string; planHash: string }, AuditRow>(`
      SELECT seq, at, entity, entity_id, event, from_status, to_status, actor, detail_json FROM audit_log
      WHERE run_id = @runId
      UNION ALL
      SELECT seq, at, entity, entity_id, event, from_status, to_status, actor, detail_json FROM audit_log
      WHERE seq BETWEEN (SELECT min(seq) - 8 FROM audit_log WHERE run_id = @runId) AND (SELECT max(seq) FROM audit_log WHERE run_id = @runId)
        AND run_id IS NULL
        AND ((entity = 'plan' AND entity_id = @planHash)
             OR (entity IN ('evidence', 'signoff') AND json_extract(detail_json, '$.planHash') = @planHash))
      ORDER BY seq`),
    evidence: store.db.prepare<
      [number],
      {
        id: number;
        run_id: string | null;
        plan_hash: string | null;
        kind: string;
        created_at: string;
        body_json: string;
        body_sha256: string;
      }
    >('SELECT * FROM evidence WHERE id = ?'),
  };
}

function statements(store: Store) {
  let s = cache.get(store);
  if (!s) cache.set(store, (s = prepare(store)));
  return s;
}

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
  const s = statements(store);
  const runs = s.page.all({ ...params, limit: q.limit, offset: q.offset }).map((r): RunSummary => ({
    runId: r.run_id,
    jobName: r.job_name,
    planHash: r.plan_hash,
    status: r.status,
    tier: r.tier,
    rangeFrom: r.range_from,
    rangeTo: r.range_to,
    unit: r.unit,
    partitionsTotal: r.partitions_total,
    partitionsPublished: r.partitions_published,
    partitionsFailed: r.partitions_failed,
    rowsWritten: r.rows_written,
    requestedBy: r.requested_by,
    executedBy: r.executed_by,
    haltReason: r.halt_reason,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  }));
  return { runs, total: s.count.get(params) ?? 0 };
}

export function runDetail(store: Store, runId: string): RunDetail {
  const run = store.runs.get(runId);
  if (!run) throw new ServiceError(`no run "${runId}" in ${store.file}`, 'not-found', 'search History for it');
  const seen = new Set<number>();
  const evidence = [...store.evidence.list({ planHash: run.planHash }), ...store.evidence.list({ runId })]
    .filter((e) => !seen.has(e.id) && seen.add(e.id))
    .sort((a, b) => a.id - b.id)
    .map((e) => ({ id: e.id, kind: e.kind, createdAt: e.createdAt, bodySha256: e.bodySha256 }));
  const timeline = statements(store)
    .timeline.all({ runId, planHash: run.planHash })
    .map((a): TimelineEntry => ({
      seq: a.seq,
      at: a.at,
      event: a.event,
      entity: a.entity,
      entityId: a.entity_id,
      actor: a.actor,
      fromStatus: a.from_status,
      toStatus: a.to_status,
      detail: a.detail_json === '{}' ? '' : a.detail_json,
    }));
  return { run: runSummary(run), partitions: store.partitions.list(runId).map(partitionCell), evidence, timeline };
}

export function evidenceById(store: Store, id: number): EvidenceView {
  const row = statements(store).evidence.get(id);
  if (!row) throw new ServiceError(`no evidence #${id} in ${store.file}`, 'not-found');
  return {
    id: row.id,
    runId: row.run_id,
    planHash: row.plan_hash,
    kind: row.kind,
    createdAt: row.created_at,
    bodySha256: row.body_sha256,
    body: JSON.parse(row.body_json) as unknown,
  };
}
