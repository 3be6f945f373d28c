import type Database from 'better-sqlite3';
import type { Clock } from '../types.ts';

/**
 * Recomputes a run's ledger counters and cursor from its partitions. Called inside every
 * partition transition so the ledger can never disagree with the partitions after a crash.
 * rows_written counts published partitions only: a rolled-back attempt wrote nothing.
 */
export function createCounterRefresher(db: Database.Database, clock: Clock): (runId: string) => boolean {
  const refresh = db.prepare<{ runId: string; now: string }>(`
    UPDATE runs SET
      partitions_total     = (SELECT count(*) FROM partitions WHERE run_id = @runId),
      partitions_published = (SELECT count(*) FROM partitions WHERE run_id = @runId AND status = 'published'),
      partitions_failed    = (SELECT count(*) FROM partitions WHERE run_id = @runId AND status = 'failed'),
      rows_written         = (SELECT coalesce(sum(rows_written), 0) FROM partitions
                              WHERE run_id = @runId AND status = 'published'),
      cursor               = (SELECT partition_key FROM partitions
                              WHERE run_id = @runId AND status NOT IN ('published', 'skipped')
                              ORDER BY seq LIMIT 1),
      updated_at           = @now
    WHERE run_id = @runId`);
  return (runId) => refresh.run({ runId, now: clock().toISOString() }).changes === 1;
}
