import type Database from 'better-sqlite3';
import { toAuditEntry, toRun, type AuditRow, type RunRow } from '../rows.ts';
import type { AuditEntry, Run } from '../types.ts';

/** What History filters runs by; `pattern` is a LIKE pattern (escaped with \) over ids, names and reasons. */
export interface HistoryFilter {
  job: string | null;
  status: string | null;
  /** created at or after (ISO) */
  from: string | null;
  /** created before (ISO) */
  to: string | null;
  pattern: string | null;
}

export interface HistoryRepo {
  /** Newest first, one page. */
  runs(filter: HistoryFilter, page: { limit: number; offset: number }): Run[];
  count(filter: HistoryFilter): number;
  /**
   * A run's audit entries and, around them, its plan's: the sanity check, dry run and sign-off
   * are bound to the plan, not the run. Only the run's own seq range is searched, so opening a
   * run never scans the whole log; a CLI dry run taken long before the run was created shows
   * with the run's evidence rather than here. Oldest first, with each entry's stored detail text.
   */
  timeline(runId: string, planHash: string): (AuditEntry & { detailJson: string })[];
}

const FILTER = `
  FROM runs
  WHERE (@job IS NULL OR job_name = @job)
    AND (@status IS NULL OR status = @status)
    AND (@from IS NULL OR created_at >= @from)
    AND (@to IS NULL OR created_at < @to)
    AND (@pattern IS NULL OR run_id LIKE @pattern ESCAPE '\\' OR job_name LIKE @pattern ESCAPE '\\'
         OR plan_hash LIKE @pattern ESCAPE '\\' OR requested_by LIKE @pattern ESCAPE '\\'
         OR executed_by LIKE @pattern ESCAPE '\\' OR halt_reason LIKE @pattern ESCAPE '\\')`;

export function createHistoryRepo(db: Database.Database): HistoryRepo {
  const statements = {
    page: db.prepare<Record<string, unknown>, RunRow>(
      `SELECT * ${FILTER} ORDER BY created_at DESC, run_id DESC LIMIT @limit OFFSET @offset`,
    ),
    count: db.prepare<Record<string, unknown>, number>(`SELECT count(*) ${FILTER}`).pluck(),
    timeline: db.prepare<{ runId: string; planHash: string }, AuditRow>(`
      SELECT * FROM audit_log
      WHERE run_id = @runId
      UNION ALL
      SELECT * FROM audit_log
      WHERE seq BETWEEN (SELECT min(seq) - 8 FROM audit_log WHERE run_id = @runId) AND (SELECT max(seq) FROM audit_log WHERE run_id = @runId)
        AND run_id IS NULL
        AND ((entity = 'plan' AND entity_id = @planHash)
             OR (entity IN ('evidence', 'signoff') AND json_extract(detail_json, '$.planHash') = @planHash))
      ORDER BY seq`),
  };
  return {
    runs: (filter, page) => statements.page.all({ ...filter, ...page }).map(toRun),
    count: (filter) => statements.count.get({ ...filter }) ?? 0,
    timeline: (runId, planHash) =>
      statements.timeline.all({ runId, planHash }).map((r) => ({ ...toAuditEntry(r), detailJson: r.detail_json })),
  };
}
