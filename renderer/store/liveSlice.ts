/**
 * Live progress from `run:progress` events: per run, the executor's numbers, partition states
 * changed since the last fetch, and a short log. `versions` counts changes per run so views
 * that fetch from SQLite know when to fetch again.
 */
import type { ExecutorEventView, LiveStats, PartitionStatusName, ProgressEvent } from '../../shared/contractTypes.ts';
import type { Slice } from './types.ts';

export interface RunLive {
  stats: LiveStats | null;
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

const EMPTY: RunLive = { stats: null, cells: {}, step: null, log: [] };

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
    case 'reconciled':
      return { text: `Reconciled: ${e.ok} agree, ${e.problems} with problems`, tone: e.problems > 0 ? 'error' : 'info' };
    case 'run-finished':
      return { text: `Run ${e.status}${e.reason ? `: ${e.reason}` : ''}`, tone: e.status === 'succeeded' ? 'info' : 'warn' };
    case 'engine-error':
      return { text: `Engine error: ${e.message}`, tone: 'error' };
    case 'partition-started':
    case 'retuned':
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
        next = { ...before, stats: ev.stats, cells, log: line ? [{ at: ev.at, ...line }, ...before.log].slice(0, 200) : before.log };
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
