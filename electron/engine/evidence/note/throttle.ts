/**
 * The note's throttle episodes: every time the run waited for its signals (replication lag,
 * lock waits, probes) to settle — when, for how long, which signals at their worst, and how it
 * ended — and the two figures beside the stop count: time throttled and throttle count.
 * Read from the bundle's audit slice by the same function `status` uses.
 */
import { throttleEpisodes, throttleTotals } from '../../executor/throttleEpisodes.ts';
import type { NoteBundle } from '../bundle.ts';
import type { Table } from './model.ts';

function episodes(bundle: NoteBundle) {
  const entries = bundle.audit.filter((e) => e.runId === bundle.runId && e.entity === 'run');
  // The note is a record: an episode still open is measured up to the export, not to "now".
  return throttleEpisodes(entries, Date.parse(bundle.exportedAt));
}

export function throttleTable(bundle: NoteBundle): Table {
  return {
    header: ['since', 'for', 'ended', 'signals (at their worst)'],
    rows: episodes(bundle).map((e) => [
      e.since,
      `${(e.ms / 1000).toFixed(1)} s`,
      e.outcome === 'open' ? 'still throttled at export' : e.outcome === 'resumed' ? 'resumed by itself' : e.outcome,
      e.reason,
    ]),
  };
}

export function throttleMetrics(bundle: NoteBundle): [string, string][] {
  const { throttledMs, throttleCount } = throttleTotals(episodes(bundle));
  return [
    ['Throttle count', String(throttleCount)],
    ['Time throttled', `${(throttledMs / 1000).toFixed(1)} s`],
  ];
}
