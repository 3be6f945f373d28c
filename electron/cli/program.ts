/**
 * What every subcommand module gets: flag parsers, the global flags, and `withStore` / `act`
 * which open what the action needs and turn its result into an exit code. Subcommands live in
 * electron/cli/commands/, one module each, registered in commands/index.ts.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { join } from 'node:path';
import { showValue } from '../../shared/errors.ts';
import type { Store } from '../engine/store/index.ts';
import type { ExitCode } from './exitCodes.ts';
import { defaultDbPath } from './paths.ts';
import type { Reporter } from './progress.ts';

export interface GlobalOptions {
  /** explicit ledger file; else the config's `ledger:`; else the app's own */
  db?: string;
  /** a folder holding backfill.config.yaml and jobs/ (or $BACKFILL_RUNBOOK_WORKSPACE) */
  workspace?: string;
  config?: string;
  jobs?: string;
  json?: boolean;
}

/**
 * Fills --config and --jobs from --workspace (or $BACKFILL_RUNBOOK_WORKSPACE), else the current
 * folder. Explicit --config / --jobs always win.
 */
export function resolveWorkspace<T extends GlobalOptions>(opts: T, env: NodeJS.ProcessEnv = process.env): T {
  const workspace = opts.workspace ?? env.BACKFILL_RUNBOOK_WORKSPACE;
  const base = workspace ?? '.';
  opts.config ??= join(base, 'backfill.config.yaml');
  opts.jobs ??= join(base, 'jobs');
  return opts;
}

export interface CliContext {
  /** Opens the local store for the action and closes it after. */
  withStore(action: (store: Store, out: Reporter) => Promise<ExitCode> | ExitCode, globals: GlobalOptions): Promise<void>;
  /** For actions that need no store (sandbox, verify of a file). */
  act(action: (out: Reporter) => Promise<ExitCode> | ExitCode, globals: { json?: boolean }): Promise<void>;
}

export type RegisterCommand = (program: Command, ctx: CliContext) => void;

export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (text: string): number => {
    const n = Number(text);
    if (!/^-?\d+$/.test(text.trim()) || n < min || n > max) {
      throw new InvalidArgumentError(
        `expected a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}, got ${showValue(text)}`,
      );
    }
    return n;
  };
}

export function number(min: number, max = Number.MAX_VALUE) {
  return (text: string): number => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected a number from ${min}${max < Number.MAX_VALUE ? ` to ${max}` : ''}, got ${showValue(text)}`);
    }
    return n;
  };
}

/** --db, --config and --json, on every subcommand that reads a workspace. */
export function withGlobals(cmd: Command): Command {
  return cmd
    .option('--db <file>', `the local SQLite ledger (default: the config's ledger, else ${defaultDbPath()})`)
    .option('--workspace <dir>', 'folder with backfill.config.yaml and jobs/ (default: $BACKFILL_RUNBOOK_WORKSPACE, else .)')
    .option('--config <file>', 'connections file (default: <workspace>/backfill.config.yaml)')
    .option('--json', 'one JSON object per line on stdout');
}
