import { Option, type Command } from 'commander';
import type { WriteMode } from '../../../shared/schemas.ts';
import { loadConfig, loadJob } from '../../engine/plan/load.ts';
import { proveIdempotency } from '../../engine/safety/idempotency.ts';
import { EXIT } from '../exitCodes.ts';
import { withGlobals, type CliContext, type GlobalOptions } from '../program.ts';

/**
 * `run-backfill prove <job> --partition 2026-05-01`: writes the partition twice inside one
 * transaction that is rolled back and compares checksums. Nothing is left on the target.
 */
export function registerProve(program: Command, ctx: CliContext): void {
  withGlobals(
    program
      .command('prove <job>')
      .description('prove a job idempotent on real data (two writes in a rolled-back transaction); kept as evidence')
      .requiredOption('--partition <key>', 'the partition to prove on, e.g. 2026-05-01')
      .addOption(new Option('--mode <mode>', "write mode (default: the job's)").choices(['overwrite-partition', 'upsert', 'append-dedupe']))
      .option('--jobs <dir>', 'folder of job files (default: <workspace>/jobs)'),
  ).action(async (name: string, opts: { partition: string; mode?: WriteMode; jobs: string } & GlobalOptions) => {
    await ctx.withStore(async (store, out) => {
      const config = loadConfig(opts.config ?? './backfill.config.yaml');
      const { job } = loadJob(opts.jobs, name, config);
      const { proof, evidenceId } = await proveIdempotency({
        config,
        job,
        writeMode: opts.mode ?? job.write_mode,
        partition: opts.partition,
        store,
      });
      out.record(
        'idempotency-proof',
        { ...proof, evidenceId },
        proof.identical
          ? `Idempotent: ${job.name} (${proof.writeMode}) on ${proof.partition} — the second write left the partition identical (${proof.first}, ${proof.rows[0]} then ${proof.rows[1]} rows). Rolled back; kept as evidence #${evidenceId}.`
          : `NOT idempotent: ${job.name} (${proof.writeMode}) on ${proof.partition} — checksum ${proof.first} after one write, ${proof.second} after two (${proof.rows[0]} then ${proof.rows[1]} rows). Rolled back; kept as evidence #${evidenceId}.`,
      );
      return proof.identical ? EXIT.ok : EXIT.failed;
    }, opts);
  });
}
