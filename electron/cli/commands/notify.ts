import type { Command } from 'commander';
import { withGlobals, resolveWorkspace, type CliContext, type GlobalOptions } from '../program.ts';

/**
 * `run-backfill notify test [--target NAME]`: sends one test message to each notify target of
 * the workspace (or the one named) and says, per target, whether it arrived. Exit 0 when every
 * one did; 2 when the config has no target, a URL's variable is not set, or a server refused.
 */
export function registerNotify(program: Command, ctx: CliContext): void {
  const notify = program.command('notify').description("the workspace's notification targets (notify: in backfill.config.yaml)");
  withGlobals(
    notify
      .command('test')
      .description('send one test message to every notify target (or --target NAME), and say whether it arrived')
      .option('--target <name>', 'only this target'),
  ).action(async (opts: { target?: string } & GlobalOptions) => {
    const { notifyTest } = await import('../notifyCommand.ts');
    await ctx.act((out) => notifyTest(resolveWorkspace(opts), out), opts);
  });
}
