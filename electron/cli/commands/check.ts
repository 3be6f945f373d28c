import type { Command } from 'commander';
import { runSanityChecks } from '../../engine/safety/sanity.ts';
import { EXIT } from '../exitCodes.ts';
import { withGlobals, type CliContext, type GlobalOptions } from '../program.ts';
import { loadRunPlan, type RunOptions } from '../runCommand.ts';
import { formatSanity } from '../tables.ts';

/** `run-backfill check <job> --from … --to …`: the source sanity checks alone (exit 4 when they block). */
export function registerCheck(program: Command, ctx: CliContext): void {
  withGlobals(
    program
      .command('check [job]')
      .description("run the job's source sanity checks over a range; exit 4 when a `fail` rule does not hold")
      .option('--from <date>', 'first partition, inclusive')
      .option('--to <date>', 'end of the range, exclusive')
      .option('--plan <file>', 'take the range from a saved plan file')
      .option('--jobs <dir>', 'folder of job files (default: <workspace>/jobs)'),
  ).action(async (job: string | undefined, opts: RunOptions & GlobalOptions) => {
    await ctx.withStore(async (store, out) => {
      const { config, prepared } = loadRunPlan(job, opts, store, out);
      const report = await runSanityChecks(prepared, config, store);
      out.record('sanity-check', { ...report }, `${formatSanity(report)}\nKept as evidence #${report.evidenceId}.`);
      return report.blocked ? EXIT.refused : EXIT.ok;
    }, opts);
  });
}
