import { InputError } from '../../shared/errors.ts';
import type { Store } from '../engine/store/index.ts';
import { EXIT, type ExitCode } from './exitCodes.ts';
import type { Reporter } from './progress.ts';
import { formatMetrics, formatPartitions, formatRun, formatRunList } from './tables.ts';
import { runMetrics } from '../engine/executor/metrics.ts';
import { runLiveness } from '../engine/executor/liveness.ts';

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
  out.record(
    'status',
    { run, liveness: runLiveness(run), metrics, partitions, reconciliation: reconciliation?.body ?? null },
    `${formatRun(run)}\n${formatMetrics(metrics)}\n\n${formatPartitions(partitions)}`,
  );
  return EXIT.ok;
}
