import type { Command } from 'commander';
import { InputError } from '../../../shared/errors.ts';
import { EXIT, type ExitCode } from '../exitCodes.ts';
import { resolveWorkspace, withGlobals, type CliContext, type GlobalOptions } from '../program.ts';
import type { Reporter } from '../progress.ts';
import { table } from '../tables.ts';

type TidyOptions = GlobalOptions & { apply?: boolean; now?: string };

/**
 * `run-backfill lake tidy <job>`: applies the job's backfill_retention_days to what it
 * published under its backfill prefix. A dry run unless --apply. The engine is loaded inside
 * the action, so the CLI's start-up pays nothing for it.
 */
export function registerLake(program: Command, ctx: CliContext): void {
  const lake = program.command('lake').description('the S3 lake: retention of what backfills wrote');
  withGlobals(
    lake
      .command('tidy <job>')
      .description("list (and with --apply delete) the job's backfill partitions older than its backfill_retention_days")
      .option('--jobs <dir>', 'folder of job files (default: <workspace>/jobs)')
      .option('--apply', 'delete what the dry run lists (manifests first, then their objects)')
      .option('--now <time>', 'judge ages as of this ISO time instead of now'),
  ).action(async (job: string, opts: TidyOptions) => ctx.act((out) => tidy(job, resolveWorkspace(opts), out), opts));
}

async function tidy(jobName: string, opts: TidyOptions, out: Reporter): Promise<ExitCode> {
  const now = opts.now === undefined ? new Date() : new Date(opts.now);
  if (Number.isNaN(now.getTime()))
    throw new InputError(`--now ${JSON.stringify(opts.now)} is not a time`, { field: '--now', value: opts.now });
  const [{ loadConfig, loadJob }, { openBucket }, { planTidy, applyTidy }] = await Promise.all([
    import('../../engine/plan/load.ts'),
    import('../../engine/targets/s3/open.ts'),
    import('../../engine/targets/s3/tidy.ts'),
  ]);
  const config = loadConfig(opts.config ?? './backfill.config.yaml');
  const { job } = loadJob(opts.jobs ?? './jobs', jobName, config);
  if (job.target.kind !== 's3') throw new InputError(`job ${job.name} does not write to S3: nothing to tidy`, { field: 'target.kind' });
  const bucket = openBucket(config, job.target.connection, 'target.connection', process.env);
  try {
    const plan = await planTidy(bucket, job, now);
    const rows = [
      ...plan.partitions.map((p) => [p.partition, p.publishedAt, p.runId, String(p.keys.length + 1), bucket.url(p.manifestKey)]),
      ...plan.strays.map((s) => ['(no manifest)', s.lastModified, '', '1', bucket.url(s.key)]),
    ];
    const what = `${plan.partitions.length} partition(s) and ${plan.strays.length} stray object(s) under ${bucket.url(plan.root)} older than ${plan.retentionDays} day(s) (before ${plan.cutoff}); ${plan.kept} newer partition(s) kept`;
    if (!opts.apply) {
      out.record(
        'tidy',
        { applied: false, ...plan },
        `${rows.length ? `${table(['partition', 'published', 'run', 'objects', 'manifest / object'], rows)}\n` : ''}Would delete ${what}. Run again with --apply to delete them.`,
      );
      return EXIT.ok;
    }
    const deleted = await applyTidy(bucket, plan);
    out.record('tidy', { applied: true, deleted, ...plan }, `Deleted ${deleted} object(s): ${what}.`);
    return EXIT.ok;
  } finally {
    bucket.close();
  }
}
