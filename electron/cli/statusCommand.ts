import { InputError } from '../../shared/errors.ts';
import type { Store } from '../engine/store/index.ts';
import { EXIT, type ExitCode } from './exitCodes.ts';
import type { Reporter } from './progress.ts';
import { formatMetrics, formatPartitions, formatRun, formatRunList, formatThrottleEpisodes } from './tables.ts';
import { runMetrics } from '../engine/executor/metrics.ts';
import { runLiveness } from '../engine/executor/liveness.ts';
import { throttleEpisodes } from '../engine/executor/throttleEpisodes.ts';
import { formatDuration } from './progress.ts';

export function statusCommand(opts: { runId?: string; limit: number }, store: Store, out: Reporter): ExitCode {
  if (!opts.runId) {
    const runs = store.runs.list({ limit: opts.limit });
    out.record('runs', { runs }, formatRunList(runs));
    return EXIT.ok;
  }
  const run = store.runs.get(opts.runId);
  if (!run)
    throw new InputError(`no run "${opts.runId}" in ${store.file}`, {
      field: '--run-id',
      value: opts.runId,
      hint: 'list runs with `run-backfill status`',
    });
  const partitions = store.partitions.list(run.runId);
  const reconciliation = store.evidence.list({ runId: run.runId, kind: 'reconciliation' }).at(-1);
  const metrics = runMetrics(store, run.runId);
  const episodes = throttleEpisodes(store.audit.list({ runId: run.runId }).filter((e) => e.entity === 'run'));
  // Throttled now: said first, with the signal, its value against its level, and for how long.
  const now = run.status === 'running' ? metrics.throttledNow : null;
  const throttled = now ? `  THROTTLED for ${formatDuration(now.ms)} (since ${now.since}): ${now.reason}\n` : '';
  const episodesText = formatThrottleEpisodes(episodes);
  out.record(
    'status',
    {
      run,
      liveness: runLiveness(run),
      metrics,
      throttle: now,
      throttleEpisodes: episodes,
      partitions,
      reconciliation: reconciliation?.body ?? null,
    },
    `${formatRun(run)}\n${throttled}${formatMetrics(metrics)}\n\n${episodesText ? `${episodesText}\n\n` : ''}${formatPartitions(partitions)}`,
  );
  return EXIT.ok;
}
