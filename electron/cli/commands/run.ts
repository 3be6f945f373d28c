import { Option, type Command } from 'commander';
import { integer, number, withGlobals, type CliContext, type GlobalOptions } from '../program.ts';
import { runCommand, type RunOptions } from '../runCommand.ts';
import { checkpointRun, unlockOperator, type RunSigningOptions } from '../evidence/runCheckpoint.ts';

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
      .option('--max-replication-lag-s <s>', 'halt when replicas fall this far behind', number(0.001))
      .option('--replica <connection>', 'watch this replica connection for lag (else pg_stat_replication on the target)')
      .option('--max-lock-wait-ms <ms>', "halt when sessions wait this long behind the backfill's locks; also its lock_timeout", integer(1))
      .option('--max-row-diff-ratio <r>', "halt when a partition's rows differ this much from the dry run", number(0.000001))
      .option('--no-run-window <HH:MM-HH:MM>', 'local hours when backfills must not run (peak hours)')
      .option('--panic-file <path>', 'stop at once when this file exists')
      .option('--run-id <id>', 'the run (and request) id; default derived from job and range')
      .option('--reason <text>', 'why this backfill is needed (kept with the plan)')
      .option('--requested-by <name>', 'who asked for it (default: you)')
      .option('--dry-run', 'measure source and target per partition; write nothing')
      .option('--resume', 'continue the run named by --run-id')
      .addOption(new Option('--reprocess <which>', 'with --resume: which partitions to (re)do').choices(['missing', 'failed', 'all']))
      .option('--plan <file>', 'run a saved plan file instead of building one from flags')
      .option('--jobs <dir>', 'folder of job files (default: <workspace>/jobs)')
      .option('--operator <name>', 'your identity name, for the four-eyes check (default: your OS user)')
      .option('--passphrase-env <var>', "unlock --operator's key from this variable and sign the audit chain head when the run ends"),
  ).action(async (job: string | undefined, opts: RunOptions & RunSigningOptions & GlobalOptions) => {
    await ctx.withStore(async (store, out) => {
      const signer = await unlockOperator(store, opts);
      try {
        return await runCommand(job, opts, store, out);
      } finally {
        checkpointRun(store, signer, opts.runId, out);
      }
    }, opts);
  });
}
