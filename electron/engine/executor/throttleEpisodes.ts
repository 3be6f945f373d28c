/**
 * A run's throttle episodes from its audit log (`run.throttled` … `run.throttle-ended`, written
 * by throttle.ts): the one reading of them that `status`, the app and the incident note share.
 */
import type { ThrottleOutcome } from './events.ts';

export interface AuditLike {
  at: string;
  event: string;
  toStatus: string | null;
  detail: Record<string, unknown>;
}

export interface ThrottleEpisode {
  since: string;
  /** when it ended; null while it goes on */
  ended: string | null;
  ms: number;
  /** the signals that throttled, at their worst */
  reason: string;
  /** `open`: still throttled now; `interrupted`: the executor died while throttled */
  outcome: ThrottleOutcome | 'open' | 'interrupted';
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Episodes in order. `now` closes one still open (a run that is throttled right now). */
export function throttleEpisodes(entries: readonly AuditLike[], now: number = Date.now()): ThrottleEpisode[] {
  const episodes: ThrottleEpisode[] = [];
  let open: ThrottleEpisode | null = null;
  for (const e of entries) {
    if (e.event === 'run.throttled') {
      open = { since: str(e.detail.since) || e.at, ended: null, ms: 0, reason: str(e.detail.reason), outcome: 'open' };
      episodes.push(open);
    } else if (e.event === 'run.throttle-ended' && open) {
      open.ended = e.at;
      open.ms = Number(e.detail.throttledMs ?? Date.parse(e.at) - Date.parse(open.since));
      open.reason = str(e.detail.reason) || open.reason;
      open.outcome = (str(e.detail.outcome) || 'resumed') as ThrottleOutcome;
      open = null;
    } else if (open && e.toStatus !== null) {
      // A status change with no end written first: the executor died (or was killed) while throttled.
      open.ended = e.at;
      open.ms = Date.parse(e.at) - Date.parse(open.since);
      open.outcome = 'interrupted';
      open = null;
    }
  }
  if (open) open.ms = Math.max(0, now - Date.parse(open.since));
  return episodes;
}

export function throttleTotals(episodes: readonly ThrottleEpisode[]): { throttledMs: number; throttleCount: number } {
  return { throttledMs: episodes.reduce((n, e) => n + e.ms, 0), throttleCount: episodes.length };
}
