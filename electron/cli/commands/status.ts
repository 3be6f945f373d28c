import type { Command } from 'commander';
import { integer, withGlobals, type CliContext, type GlobalOptions } from '../program.ts';

export function registerStatus(program: Command, ctx: CliContext): void {
  withGlobals(
    program
      .command('status')
      .description('show a run and its partitions (or the latest runs)')
      .option('--run-id <id>', 'the run to show')
      .option('--limit <n>', 'how many runs to list', integer(1, 10_000), 20),
  ).action(async (opts: { runId?: string; limit: number } & GlobalOptions) => {
    const { statusCommand } = await import('../statusCommand.ts');
    await ctx.withStore((store, out) => statusCommand(opts, store, out), opts);
  });
}
