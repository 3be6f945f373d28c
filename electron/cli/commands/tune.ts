import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { InputError } from '../../../shared/errors.ts';
import { EXIT } from '../exitCodes.ts';
import { withGlobals, type CliContext, type GlobalOptions } from '../program.ts';
import { flagName, givenPlanFlags, optionOf, PLAN_FLAGS } from '../runFlags.ts';
import { liveRetunable } from '../../engine/runbook/retunable.ts';

/**
 * `run-backfill tune --run-id X --sleep-ms N --duty-cycle F --max-replication-lag-s S …`: retunes
 * a running backfill without restarting it — its pause, concurrency, duty cycle and its stop and
 * throttle levels, from the one flag table. The executor re-reads them from the ledger (the pause
 * and concurrency before each partition, the levels at each measurement). The same retune as a
 * resume's (engine/runbook/retune.ts): checked as a plan, audited, shown in the note.
 */
export function registerTune(program: Command, ctx: CliContext): void {
  const flags = PLAN_FLAGS.filter((f) => liveRetunable(f.field));
  const command = program
    .command('tune')
    .description('change the pause, concurrency, duty cycle and stop/throttle levels of a run while it runs')
    .requiredOption('--run-id <id>', 'the run to retune');
  for (const flag of flags) command.addOption(optionOf(flag));
  withGlobals(command).action(async (opts: { runId: string } & GlobalOptions) => {
    const [{ planSchema }, { effectivePlan, retuneFor }] = await Promise.all([
      import('../../../shared/schemas.ts'),
      import('../../engine/runbook/retune.ts'),
    ]);
    await ctx.withStore((store, out) => {
      const changes = givenPlanFlags(opts)
        .filter((g) => liveRetunable(g.field))
        .map((g) => ({ field: g.field, value: g.value, name: g.name }));
      if (changes.length === 0) {
        throw new InputError(`give at least one of ${flags.map(flagName).join(', ')}`, { field: '--sleep-ms' });
      }
      const run = store.runs.get(opts.runId);
      if (!run) throw new InputError(`no run "${opts.runId}" in ${store.file}`, { field: '--run-id', value: opts.runId });
      const stored = store.plans.get(run.planHash);
      if (!stored) throw new InputError(`run "${run.runId}" has no plan on record`, { field: '--run-id', value: run.runId });
      const retune = retuneFor(run.runId, effectivePlan(planSchema.parse(stored.plan), run.settings), changes);
      const updated = retune
        ? store.runs.updateSettings(run.runId, retune.settings, userInfo().username, { summary: retune.summary, via: 'tune' })
        : run;
      const s = updated.settings;
      out.record(
        'tuned',
        { runId: run.runId, settings: s, status: updated.status, changed: retune?.summary ?? null },
        `Run ${run.runId} (${updated.status}): ${s.sleepMs ?? 0} ms between partitions, concurrency ${s.concurrency ?? 1}` +
          `${s.dutyCycle !== undefined ? `, duty cycle ${s.dutyCycle}` : ''}${retune ? '' : ' (unchanged)'}` +
          `${retune && updated.status === 'running' ? ' — applies from the next partition' : ''}` +
          `${retune ? `\nChanged: ${retune.summary}` : ''}`,
      );
      return EXIT.ok;
    }, opts);
  });
}
