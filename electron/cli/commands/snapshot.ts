import type { Command } from 'commander';
import { Option } from 'commander';
import { InputError } from '../../../shared/errors.ts';
import { planSchema } from '../../../shared/schemas.ts';
import { loadConfig, loadJob } from '../../engine/plan/load.ts';
import { preparePlan } from '../../engine/runbook/prepare.ts';
import { takeSnapshot } from '../../engine/snapshot/index.ts';
import type { Store } from '../../engine/store/index.ts';
import { EXIT, type ExitCode } from '../exitCodes.ts';
import { integer, withGlobals, type CliContext, type GlobalOptions } from '../program.ts';
import type { Reporter } from '../progress.ts';
import { loadRunPlan, type RunOptions } from '../runCommand.ts';
import { table } from '../tables.ts';

type SnapshotOptions = Omit<RunOptions, 'config' | 'jobs'> & GlobalOptions & { concurrency?: number };

/**
 * `run-backfill snapshot`: copies the target partitions a run would overwrite aside, first
 * step of the manual checklist. The same job + range flags as `run` (or --plan FILE), or just
 * --run-id of a run already on record. Copies go to `_snapshots/<run id>/` (S3, server-side)
 * or the `backfill_runbook_snapshots` schema (Postgres); `restore` puts them back.
 */
export function registerSnapshot(program: Command, ctx: CliContext): void {
  withGlobals(
    program
      .command('snapshot [job]')
      .description('copy the target partitions of a run aside before it overwrites them (undo with `restore`)')
      .option('--from <date>', 'first partition, inclusive')
      .option('--to <date>', 'end of the range, exclusive')
      .addOption(new Option('--unit <unit>', 'partition unit; must match the job').choices(['hour', 'day', 'month']))
      .option('--run-id <id>', 'the run the snapshot belongs to (its id names the copies)')
      .option('--plan <file>', 'a saved plan file instead of job and range flags')
      .option('--jobs <dir>', 'folder of job files (default: <workspace>/jobs)')
      .option('--concurrency <n>', 'S3 copies in flight at once (default 8)', integer(1, 64)),
  ).action(async (job: string | undefined, opts: SnapshotOptions) => {
    await ctx.withStore((store, out) => snapshotCommand(job, opts, store, out), opts);
  });
}

async function snapshotCommand(jobName: string | undefined, opts: SnapshotOptions, store: Store, out: Reporter): Promise<ExitCode> {
  const flags = { ...opts, concurrency: undefined, config: opts.config ?? './backfill.config.yaml', jobs: opts.jobs ?? './jobs' };
  const onRecord = !jobName && !opts.plan && opts.runId ? store.runs.get(opts.runId) : undefined;
  let loaded;
  if (onRecord) {
    const stored = store.plans.get(onRecord.planHash);
    if (!stored) throw new InputError(`run "${onRecord.runId}" has no plan on record`, { field: '--run-id', value: onRecord.runId });
    const config = loadConfig(flags.config);
    const { job } = loadJob(flags.jobs, onRecord.jobName, config);
    const plan = planSchema.parse(stored.plan);
    loaded = { config, job, plan, prepared: preparePlan(job, plan, store) };
  } else {
    if (!jobName && !opts.plan)
      throw new InputError('name the job and range (as for run), give --plan FILE, or --run-id of a run on record', { field: '<job>' });
    loaded = loadRunPlan(jobName, flags, store, out);
  }
  const { config, job, plan, prepared } = loaded;
  out.say(`Snapshot for run ${plan.request_id}: ${job.name}, ${prepared.summary}`);
  const rows: string[][] = [];
  const outcome = await takeSnapshot(
    {
      config,
      job,
      jobHash: prepared.jobHash,
      planHash: prepared.planHash,
      runId: plan.request_id,
      partitions: prepared.partitions,
      store,
      concurrency: opts.concurrency,
    },
    (row) => rows.push([row.partition.key, String(row.items), row.bytes === null ? (row.checksum ?? '') : String(row.bytes)]),
  );
  const header = outcome.target === 's3' ? ['partition', 'objects', 'bytes'] : ['partition', 'rows', 'checksum'];
  out.record(
    'snapshot',
    {
      runId: plan.request_id,
      target: outcome.target,
      location: outcome.location,
      evidenceId: outcome.evidenceId,
      ms: outcome.ms,
      partitions: outcome.partitions.map((p) => ({ key: p.partition.key, items: p.items, bytes: p.bytes, checksum: p.checksum })),
    },
    `${table(header, rows)}\nSnapshot of ${rows.length} partition(s) at ${outcome.location}, kept as evidence #${outcome.evidenceId} (${outcome.ms} ms). Undo a run with: run-backfill restore --run-id ${plan.request_id}`,
  );
  return EXIT.ok;
}
