/**
 * Live progress from `run:progress` events: per run, the executor's numbers, partition states
 * changed since the last fetch, and a short log. `versions` counts changes per run so views
 * that fetch from SQLite know when to fetch again.
 */
import type { ExecutorEventView, LiveStats, PartitionStatusName, ProgressEvent } from '../../shared/contractTypes.ts';
import type { Slice } from './types.ts';
import type { SignalSeries } from '../lib/signalChart.ts';

export type { SignalSeries };

export interface RunLive {
  stats: LiveStats | null;
  /** signal id → its recent readings */
  signals: Record<string, SignalSeries>;
  /** partitions published, [epoch ms, rows], for rows per minute */
  published: [number, number][];
  /** throttle episodes of this session, [start, end] (end null: throttled now) */
  episodes: [number, number | null][];
  /** partition key → status, from events since the partitions were last fetched */
  cells: Record<string, PartitionStatusName>;
  step: { step: string; done: number; total: number; key: string | null } | null;
  log: { at: string; text: string; tone: 'info' | 'warn' | 'error' }[];
}

export interface LiveSlice {
  live: Record<string, RunLive>;
  versions: Record<string, number>;
  applyProgress: (event: ProgressEvent) => void;
  bump: (runId: string) => void;
}

const EMPTY: RunLive = { stats: null, signals: {}, published: [], episodes: [], cells: {}, step: null, log: [] };

/** Ten minutes of readings at the default check interval. */
const MAX_POINTS = 600;

/** The chart's data after an event: readings appended per signal, published partitions kept for rows per minute. */
export function followSignals(live: RunLive, e: ExecutorEventView, at: number): Pick<RunLive, 'signals' | 'published' | 'episodes'> {
  const { signals: kept, published, episodes } = live;
  if (e.type === 'partition-published')
    return { signals: kept, episodes, published: [...published, [at, e.rows] as [number, number]].slice(-MAX_POINTS) };
  if (e.type === 'throttled') return { signals: kept, published, episodes: [...episodes, [Date.parse(e.since), null]] };
  if (e.type === 'throttle-ended')
    return { signals: kept, published, episodes: episodes.map(([from, to]) => [from, to ?? Date.parse(e.since) + e.throttledMs]) };
  if (e.type !== 'signals') return { signals: kept, published, episodes };
  const signals = { ...live.signals };
  for (const r of e.readings) {
    const before = signals[r.signal];
    signals[r.signal] = {
      signal: r.signal,
      label: r.label,
      unit: r.unit,
      max: r.max,
      critical: r.critical,
      points: [...(before?.points ?? []), [at, r.value] as [number, number | null]].slice(-MAX_POINTS),
    };
  }
  return { signals, published, episodes };
}

/** The partition state an executor event implies, if any. */
export function cellChange(e: ExecutorEventView): [string, PartitionStatusName] | null {
  switch (e.type) {
    case 'partition-started':
      return [e.key, 'running'];
    case 'partition-published':
      return [e.key, 'published'];
    case 'partition-failed':
      return [e.key, 'failed'];
    case 'partition-retry':
      return [e.key, 'pending'];
    case 'partition-resolved':
      return [e.key, e.status];
    case 'run-started':
    case 'stopping':
    case 'retuned':
    case 'signals':
    case 'throttled':
    case 'throttle-ended':
    case 'reconciled':
    case 'run-finished':
    case 'engine-error':
    case 'detached':
      return null;
  }
}

export function describeEvent(e: ExecutorEventView): { text: string; tone: 'info' | 'warn' | 'error' } | null {
  switch (e.type) {
    case 'run-started':
      return { text: `${e.resumed ? 'Resumed' : 'Started'}: ${e.toDo} of ${e.total} partitions to do`, tone: 'info' };
    case 'partition-published':
      return { text: `${e.key} published: ${e.rows} rows in ${(e.ms / 1000).toFixed(1)} s`, tone: 'info' };
    case 'partition-failed':
      return { text: `${e.key} failed: ${e.error}`, tone: 'error' };
    case 'partition-retry':
      return { text: `${e.key} will be retried (attempt ${e.attempt}): ${e.error}`, tone: 'warn' };
    case 'partition-resolved':
      return { text: `${e.key}: ${e.reason}`, tone: 'info' };
    case 'stopping':
      return { text: `${e.kind === 'condition' ? 'Stop condition' : 'Stop requested'}: ${e.reason}`, tone: 'warn' };
    case 'throttled':
      return { text: `Throttled: ${e.reason}`, tone: 'warn' };
    case 'throttle-ended':
      return {
        text: `Throttle ${e.outcome === 'resumed' ? 'ended, continuing' : `episode ended (run ${e.outcome})`} after ${(e.throttledMs / 1000).toFixed(1)} s: ${e.reason}`,
        tone: 'info',
      };
    case 'reconciled':
      return { text: `Reconciled: ${e.ok} agree, ${e.problems} with problems`, tone: e.problems > 0 ? 'error' : 'info' };
    case 'run-finished':
      return { text: `Run ${e.status}${e.reason ? `: ${e.reason}` : ''}`, tone: e.status === 'succeeded' ? 'info' : 'warn' };
    case 'engine-error':
      return { text: `Engine error: ${e.message}`, tone: 'error' };
    case 'partition-started':
    case 'retuned':
    case 'signals':
    case 'detached':
      return null;
  }
}

/** Events after which data in SQLite changed enough that views should fetch again. */
const REFETCH = new Set<ExecutorEventView['type']>(['run-started', 'run-finished', 'detached', 'reconciled', 'engine-error']);

export const createLiveSlice: Slice<LiveSlice> = (set) => ({
  live: {},
  versions: {},
  applyProgress: (ev) =>
    set((s) => {
      const before = s.live[ev.runId] ?? EMPTY;
      let next: RunLive;
      let refetch = false;
      if (ev.kind === 'step') {
        next = { ...before, step: { step: ev.step, done: ev.done, total: ev.total, key: ev.key } };
      } else {
        const change = cellChange(ev.event);
        const line = describeEvent(ev.event);
        refetch = REFETCH.has(ev.event.type);
        // After a refetching event the partitions come fresh from SQLite; the overlay would only mask them.
        const cells = refetch ? {} : change ? { ...before.cells, [change[0]]: change[1] } : before.cells;
        next = {
          ...before,
          ...followSignals(before, ev.event, Date.parse(ev.at)),
          stats: ev.stats,
          cells,
          log: line ? [{ at: ev.at, ...line }, ...before.log].slice(0, 200) : before.log,
        };
      }
      return {
        live: { ...s.live, [ev.runId]: next },
        versions: refetch ? { ...s.versions, [ev.runId]: (s.versions[ev.runId] ?? 0) + 1 } : s.versions,
      };
    }),
  bump: (runId) =>
    set((s) => ({
      versions: { ...s.versions, [runId]: (s.versions[runId] ?? 0) + 1 },
      // fresh data from SQLite supersedes what events said
      live: s.live[runId] ? { ...s.live, [runId]: { ...(s.live[runId] ?? EMPTY), cells: {} } } : s.live,
    })),
});
