/**
 * `run-backfill`: a thin shell over engine/. Parses flags, opens the local store, and maps
 * every outcome to the exit codes of DESIGN §5.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { GateError, InputError, showValue } from '../../shared/errors.ts';
import { openStore, StoreError, type Store } from '../engine/store/index.ts';
import { PgConnectError } from '../engine/targets/postgres/connect.ts';
import { EXIT, type ExitCode } from './exitCodes.ts';
import { defaultDbPath } from './paths.ts';
import { createReporter, type Reporter } from './progress.ts';
import { runCommand, type RunOptions } from './runCommand.ts';
import { statusCommand } from './statusCommand.ts';

interface GlobalOptions {
  db: string;
  json?: boolean;
}

function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (text: string): number => {
    const n = Number(text);
    if (!/^-?\d+$/.test(text.trim()) || n < min || n > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}, got ${showValue(text)}`);
    }
    return n;
  };
}

function withGlobals(cmd: Command): Command {
  return cmd
    .option('--db <file>', 'the local SQLite file (default: the app\'s own, or $BACKFILL_RUNBOOK_DB)', defaultDbPath())
    .option('--json', 'one JSON object per line on stdout');
}

export function buildProgram(run: (action: (store: Store, out: Reporter) => Promise<ExitCode>, g: GlobalOptions) => Promise<void>): Command {
  const program = new Command('run-backfill')
    .description('Recompute past partitions of a job safely: plan, gates, dry run, execute, reconcile.')
    .showHelpAfterError('(run-backfill --help for usage)')
    .exitOverride();

  withGlobals(
    program
      .command('run [job]', { isDefault: true })
      .description('plan and execute (or --dry-run / --resume) a backfill of <job>')
      .option('--from <date>', 'first partition, inclusive (e.g. 2026-05-01)')
      .option('--to <date>', 'end of the range, exclusive (e.g. 2026-07-01)')
      .addOption(new Option('--unit <unit>', 'partition unit; must match the job').choices(['hour', 'day', 'month']))
      .addOption(new Option('--mode <mode>', 'write mode (default: the job\'s)').choices(['overwrite-partition', 'upsert', 'append-dedupe']))
      .option('--sleep-ms <ms>', 'pause between partitions', integer(0, 86_400_000))
      .option('--concurrency <n>', 'partitions written at once (default 1)', integer(1, 16))
      .option('--max-consecutive-failures <n>', 'halt after this many failures in a row (default 3)', integer(1, 1000))
      .option('--run-id <id>', 'the run (and request) id; default derived from job and range')
      .option('--reason <text>', 'why this backfill is needed (kept with the plan)')
      .option('--requested-by <name>', 'who asked for it (default: you)')
      .option('--dry-run', 'measure source and target per partition; write nothing')
      .option('--resume', 'continue the run named by --run-id')
      .addOption(new Option('--reprocess <which>', 'with --resume: which partitions to (re)do').choices(['missing', 'failed', 'all']))
      .option('--plan <file>', 'run a saved plan file instead of building one from flags')
      .option('--config <file>', 'connections file', './backfill.config.yaml')
      .option('--jobs <dir>', 'folder of job files', './jobs'),
  ).action(async (job: string | undefined, opts: RunOptions & GlobalOptions) => {
    await run((store, out) => runCommand(job, opts, store, out), opts);
  });

  withGlobals(
    program
      .command('status')
      .description('show a run and its partitions (or the latest runs)')
      .option('--run-id <id>', 'the run to show')
      .option('--limit <n>', 'how many runs to list', integer(1, 10_000), 20),
  ).action(async (opts: { runId?: string; limit: number } & GlobalOptions) => {
    await run((store, out) => Promise.resolve(statusCommand(opts, store, out)), opts);
  });

  return program;
}

export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof InputError || err instanceof PgConnectError || err instanceof StoreError) return EXIT.usage;
  if (err instanceof GateError) return EXIT.refused;
  return EXIT.failed;
}

function describeError(err: unknown): string {
  if (err instanceof InputError) {
    const { file, field, hint } = err.details;
    const where = [file && !err.message.includes(file) ? file : undefined, field && !err.message.includes(field) ? `field ${field}` : undefined]
      .filter(Boolean)
      .join(': ');
    return `${where ? `${where}: ` : ''}${err.message}${hint ? `\n  hint: ${hint}` : ''}`;
  }
  if (err instanceof GateError) return [err.message, ...err.reasons.map((r) => `  - ${r}`)].join('\n');
  if (err instanceof Error) return err instanceof StoreError || err instanceof PgConnectError ? err.message : (err.stack ?? err.message);
  return String(err);
}

export async function main(argv: string[]): Promise<ExitCode> {
  let code: ExitCode = EXIT.ok;
  let json = false;
  const program = buildProgram(async (action, g) => {
    json = Boolean(g.json);
    const out = createReporter(json);
    const store = openStore(g.db);
    try {
      code = await action(store, out);
    } finally {
      out.close();
      store.close();
    }
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    code = exitCodeOf(err);
    const text = describeError(err);
    if (json) process.stdout.write(`${JSON.stringify({ type: 'error', exitCode: code, message: text })}\n`);
    process.stderr.write(`run-backfill: ${text}\n`);
  }
  return code;
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
