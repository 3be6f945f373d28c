import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { InputError } from '../../../shared/errors.ts';
import { EXIT } from '../exitCodes.ts';
import { integer, withGlobals, type CliContext, type GlobalOptions } from '../program.ts';

/**
 * `run-backfill tune --run-id X --sleep-ms N --concurrency N`: retunes a running backfill
 * without restarting it. The executor re-reads these from the ledger before each partition.
 * The same retune as a resume's (engine/runbook/retune.ts): audited, shown in the note.
 */
export function registerTune(program: Command, ctx: CliContext): void {
  withGlobals(
    program
      .command('tune')
      .description('change the pause between partitions and the concurrency of a run while it runs')
      .requiredOption('--run-id <id>', 'the run to retune')
      .option('--sleep-ms <ms>', 'pause between partitions', integer(0, 86_400_000))
      .option('--concurrency <n>', 'partitions written at once', integer(1, 16)),
  ).action(async (opts: { runId: string; sleepMs?: number; concurrency?: number } & GlobalOptions) => {
    const [{ planSchema }, { effectivePlan, retuneFor }] = await Promise.all([
      import('../../../shared/schemas.ts'),
      import('../../engine/runbook/retune.ts'),
    ]);
    await ctx.withStore((store, out) => {
      if (opts.sleepMs === undefined && opts.concurrency === undefined) {
        throw new InputError('give --sleep-ms and/or --concurrency', { field: '--sleep-ms' });
      }
      const run = store.runs.get(opts.runId);
      if (!run) throw new InputError(`no run "${opts.runId}" in ${store.file}`, { field: '--run-id', value: opts.runId });
      const stored = store.plans.get(run.planHash);
      if (!stored) throw new InputError(`run "${run.runId}" has no plan on record`, { field: '--run-id', value: run.runId });
      const changes = [
        ...(opts.sleepMs !== undefined ? [{ field: 'throttle.sleep_ms', value: opts.sleepMs, name: '--sleep-ms' }] : []),
        ...(opts.concurrency !== undefined ? [{ field: 'throttle.concurrency', value: opts.concurrency, name: '--concurrency' }] : []),
      ];
      const retune = retuneFor(run.runId, effectivePlan(planSchema.parse(stored.plan), run.settings), changes);
      const updated = retune
        ? store.runs.updateSettings(run.runId, retune.settings, userInfo().username, { summary: retune.summary, via: 'tune' })
        : run;
      out.record(
        'tuned',
        { runId: run.runId, settings: updated.settings, status: updated.status, changed: retune?.summary ?? null },
        `Run ${run.runId} (${updated.status}): ${updated.settings.sleepMs ?? 0} ms between partitions, concurrency ${updated.settings.concurrency ?? 1}${retune ? '' : ' (unchanged)'}${retune && updated.status === 'running' ? ' — applies from the next partition' : ''}`,
      );
      return EXIT.ok;
    }, opts);
  });
}
