import { Option, type Command } from 'commander';
import { withGlobals, type CliContext, type GlobalOptions } from '../program.ts';
import { optionOf, PLAN_FLAGS } from '../runFlags.ts';
import type { RunOptions } from '../runCommand.ts';
import type { RunSigningOptions } from '../evidence/runCheckpoint.ts';

export function registerRun(program: Command, ctx: CliContext): void {
  const run = program
    .command('run [job]', { isDefault: true })
    .description('plan and execute (or --dry-run / --resume) a backfill of <job>');
  for (const flag of PLAN_FLAGS) run.addOption(optionOf(flag));
  withGlobals(
    run
      .option('--dry-run', 'measure source and target per partition; write nothing')
      .option('--resume', 'continue the run named by --run-id (throttle and stop flags retune it)')
      .addOption(new Option('--reprocess <which>', 'with --resume: which partitions to (re)do').choices(['missing', 'failed', 'all']))
      .option('--plan <file>', 'run a saved plan file instead of building one from flags (flags may only repeat it)')
      .option('--jobs <dir>', 'folder of job files (default: <workspace>/jobs)')
      .option('--operator <name>', 'your identity name, for the four-eyes check (default: your OS user)')
      .option('--passphrase-env <var>', "unlock --operator's key from this variable and sign the audit chain head when the run ends"),
  ).action(async (job: string | undefined, opts: RunOptions & RunSigningOptions & GlobalOptions) => {
    // Loaded here, not at start-up: the executor, pg and the AWS SDK come with it.
    const [{ runCommand }, { checkpointRun, unlockOperator }] = await Promise.all([
      import('../runCommand.ts'),
      import('../evidence/runCheckpoint.ts'),
    ]);
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
