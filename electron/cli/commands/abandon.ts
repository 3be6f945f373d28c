import { hostname, userInfo } from 'node:os';
import type { Command } from 'commander';
import { EXIT } from '../exitCodes.ts';
import { withGlobals, type CliContext, type GlobalOptions } from '../program.ts';

/**
 * `run-backfill abandon --run-id X [--reason TEXT]`: ends a run held after its canary, for good
 * (engine/runbook/canary.ts). Nothing more is written; the canary's partitions keep what it wrote
 * until `run-backfill restore` puts the snapshot back.
 */
export function registerAbandon(program: Command, ctx: CliContext): void {
  withGlobals(
    program
      .command('abandon')
      .description('end a run held after its canary: nothing more is written (restore the canary partitions from the snapshot)')
      .requiredOption('--run-id <id>', 'the run held in canary')
      .option('--reason <text>', 'why (kept in the audit log and the incident note)', '')
      .option('--operator <name>', 'who abandons it (default: you)'),
  ).action(async (opts: { runId: string; reason: string; operator?: string } & GlobalOptions) => {
    const [{ abandonRun }, { findSnapshot }] = await Promise.all([
      import('../../engine/runbook/canary.ts'),
      import('../../engine/snapshot/index.ts'),
    ]);
    await ctx.withStore((store, out) => {
      const run = abandonRun(store, opts.runId, opts.operator ?? `${userInfo().username}@${hostname()}`, opts.reason);
      const snapshot = findSnapshot(store, run.runId) !== undefined;
      out.record(
        'abandoned',
        { runId: run.runId, status: run.status, published: run.partitionsPublished, reason: run.haltReason },
        `Run ${run.runId} abandoned after its canary (${run.partitionsPublished} partition(s) written by the canary stay as they are).` +
          (snapshot
            ? ` Put them back with: run-backfill restore --run-id ${run.runId}`
            : ' No snapshot was taken for this run: the canary partitions cannot be restored from one.'),
      );
      return EXIT.ok;
    }, opts);
  });
}
