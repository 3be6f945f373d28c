/**
 * The command line's parser: commander with every subcommand module the command line needs
 * (commands/index.ts). Apart from main.ts, so a test can parse what the sandbox's scenarios
 * print with the very same parser, without running anything.
 */
import { Command } from 'commander';
import { appVersion } from '../engine/appVersion.ts';
import { COMMANDS } from './commands/index.ts';
import type { CliContext } from './program.ts';

export async function buildProgram(ctx: CliContext, commands: readonly (typeof COMMANDS)[number][] = COMMANDS): Promise<Command> {
  const program = new Command('run-backfill')
    .description('Recompute past partitions of a job safely: plan, gates, dry run, execute, reconcile.')
    .version(appVersion(), '-V, --version', 'print the version')
    .showHelpAfterError('(run-backfill --help for usage)')
    .exitOverride();
  for (const register of await Promise.all(commands.map((c) => c.load()))) register(program, ctx);
  return program;
}
