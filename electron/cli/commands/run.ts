import { Option, type Command } from 'commander';
import { integer, withGlobals, type CliContext, type GlobalOptions } from '../program.ts';
import { runCommand, type RunOptions } from '../runCommand.ts';

export function registerRun(program: Command, ctx: CliContext): void {
  withGlobals(
    program
      .command('run [job]', { isDefault: true })
      .description('plan and execute (or --dry-run / --resume) a backfill of <job>')
      .option('--from <date>', 'first partition, inclusive (e.g. 2026-05-01)')
      .option('--to <date>', 'end of the range, exclusive (e.g. 2026-07-01)')
      .addOption(new Option('--unit <unit>', 'partition unit; must match the job').choices(['hour', 'day', 'month']))
      .addOption(new Option('--mode <mode>', "write mode (default: the job's)").choices(['overwrite-partition', 'upsert', 'append-dedupe']))
      .option('--sleep-ms <ms>', 'pause between partitions', integer(0, 86_400_000))
      .option('--concurrency <n>', 'partitions written at once (default 1)', integer(1, 16))
      .option('--max-consecutive-failures <n>', 'halt after this many failures in a row (default 3)', integer(1, 1000))
      .option('--run-id <id>', 'the run (and request) id; default derived from job and range')
      .option('--reason <text>', 'why this backfill is needed (kept with the plan)')
      .option('--requested-by <name>', 'who asked for it (default: you)')
      .option('--dry-run', 'measure source and target per partition; write nothing')
      .option('--resume', 'continue the run named by --run-id')
      .addOption(new Option('--reprocess <which>', 'with --resume: which partitions to (re)do').choices(['missing', 'failed', 'all']))
      .option('--plan <file>', 'run a saved plan file instead of building one from flags')
      .option('--jobs <dir>', 'folder of job files (default: <workspace>/jobs)'),
  ).action(async (job: string | undefined, opts: RunOptions & GlobalOptions) => {
    await ctx.withStore((store, out) => runCommand(job, opts, store, out), opts);
  });
}
