import type { Command } from 'commander';
import { GateError, InputError } from '../../../shared/errors.ts';
import { jobHash } from '../../engine/plan/hash.ts';
import { loadConfig, loadJob } from '../../engine/plan/load.ts';
import { findSnapshot, restoreSnapshot } from '../../engine/snapshot/index.ts';
import type { Store } from '../../engine/store/index.ts';
import { EXIT, type ExitCode } from '../exitCodes.ts';
import { integer, withGlobals, type CliContext, type GlobalOptions } from '../program.ts';
import type { Reporter } from '../progress.ts';
import { table } from '../tables.ts';

interface RestoreOptions extends GlobalOptions {
  runId: string;
  partition?: string;
  concurrency?: number;
}

/**
 * `run-backfill restore --run-id X [--partition K]`: puts target partitions back exactly as
 * `snapshot` found them (S3: same keys, same sizes; Postgres: same rows, same checksum).
 */
export function registerRestore(program: Command, ctx: CliContext): void {
  withGlobals(
    program
      .command('restore')
      .description("put target partitions back exactly as the run's snapshot found them")
      .requiredOption('--run-id <id>', 'the run whose snapshot to restore')
      .option('--partition <key>', 'only this partition (default: every partition of the snapshot)')
      .option('--jobs <dir>', 'folder of job files (default: <workspace>/jobs)')
      .option('--concurrency <n>', 'S3 copies in flight at once (default 8)', integer(1, 64)),
  ).action(async (opts: RestoreOptions) => {
    await ctx.withStore((store, out) => restoreCommand(opts, store, out), opts);
  });
}

async function restoreCommand(opts: RestoreOptions, store: Store, out: Reporter): Promise<ExitCode> {
  const snapshot = findSnapshot(store, opts.runId);
  if (!snapshot) {
    throw new InputError(
      `no snapshot on record for run "${opts.runId}" in ${store.file}: take one with \`run-backfill snapshot <job> --from … --to … --run-id ${opts.runId}\` before running`,
      {
        field: '--run-id',
        value: opts.runId,
      },
    );
  }
  const config = loadConfig(opts.config ?? './backfill.config.yaml');
  const { job } = loadJob(opts.jobs ?? './jobs', snapshot.body.jobName, config);
  if (jobHash(job) !== snapshot.body.jobHash) {
    throw new GateError(`job "${job.name}" changed since the snapshot of run ${opts.runId}: its target may be elsewhere now`, [
      `job hash at the snapshot ${snapshot.body.jobHash.slice(0, 12)}, now ${jobHash(job).slice(0, 12)}`,
      'restore the job file as it was, then restore the snapshot',
    ]);
  }
  const run = store.runs.get(opts.runId);
  if (run?.leaseOwner && run.leaseExpiresAt && run.leaseExpiresAt > new Date().toISOString() && run.status === 'running') {
    throw new GateError(`run "${opts.runId}" is being executed right now (${run.leaseOwner}): stop it before restoring its partitions`);
  }
  const outcome = await restoreSnapshot({
    config,
    job,
    runId: opts.runId,
    store,
    snapshot,
    partitionKey: opts.partition,
    concurrency: opts.concurrency,
  });
  const s3 = snapshot.body.target === 's3';
  out.record(
    'restore',
    { runId: opts.runId, target: snapshot.body.target, evidenceId: outcome.evidenceId, ms: outcome.ms, partitions: outcome.rows },
    `${table(
      ['partition', s3 ? 'objects restored' : 'rows restored', s3 ? 'objects removed' : 'rows replaced'],
      outcome.rows.map((r) => [r.partition, String(r.restored), String(r.removed)]),
    )}\nRestored ${outcome.rows.length} partition(s) of run ${opts.runId} from snapshot evidence #${snapshot.id}; kept as evidence #${outcome.evidenceId}.`,
  );
  return EXIT.ok;
}
