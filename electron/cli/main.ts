/**
 * `run-backfill`: a thin shell over engine/. Parses flags, opens the local store, and maps
 * every outcome to the exit codes of DESIGN §5.
 */
import { Command, CommanderError } from 'commander';
import { GateError, InputError } from '../../shared/errors.ts';
import { openStore, StoreError } from '../engine/store/index.ts';
import { PgConnectError } from '../engine/targets/postgres/connect.ts';
import { EXIT, type ExitCode } from './exitCodes.ts';
import { COMMANDS } from './commands/index.ts';
import { resolveWorkspace, type CliContext, type GlobalOptions } from './program.ts';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadConfig } from '../engine/plan/load.ts';
import { defaultDbPath } from './paths.ts';
import { createReporter } from './progress.ts';

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('run-backfill')
    .description('Recompute past partitions of a job safely: plan, gates, dry run, execute, reconcile.')
    .showHelpAfterError('(run-backfill --help for usage)')
    .exitOverride();
  for (const register of COMMANDS) register(program, ctx);
  return program;
}

/** --db wins; then the workspace config's `ledger:` (relative to the config); then the app's own. */
function ledgerFile(g: GlobalOptions): string {
  if (g.db) return g.db;
  if (g.config && existsSync(g.config)) {
    const { ledger } = loadConfig(g.config);
    if (ledger) return resolve(dirname(g.config), ledger);
  }
  return defaultDbPath();
}

export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof InputError || err instanceof PgConnectError || err instanceof StoreError) return EXIT.usage;
  if (err instanceof GateError) return EXIT.refused;
  return EXIT.failed;
}

function describeError(err: unknown): string {
  if (err instanceof InputError) {
    const { file, field, hint } = err.details;
    const where = [
      file && !err.message.includes(file) ? file : undefined,
      field && !err.message.includes(field) ? `field ${field}` : undefined,
    ]
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
  const program = buildProgram({
    withStore: async (action, g) => {
      resolveWorkspace(g);
      json = Boolean(g.json);
      const out = createReporter(json);
      const store = openStore(ledgerFile(g));
      try {
        code = await action(store, out);
      } finally {
        out.close();
        store.close();
      }
    },
    act: async (action, g) => {
      json = Boolean(g.json);
      const out = createReporter(json);
      try {
        code = await action(out);
      } finally {
        out.close();
      }
    },
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
