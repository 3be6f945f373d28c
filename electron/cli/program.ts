/**
 * What every subcommand module gets: flag parsers, the global flags, and `withStore` / `act`
 * which open what the action needs and turn its result into an exit code. Subcommands live in
 * electron/cli/commands/, one module each, registered in commands/index.ts.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { showValue } from '../../shared/errors.ts';
import type { Store } from '../engine/store/index.ts';
import type { ExitCode } from './exitCodes.ts';
import { defaultDbPath } from './paths.ts';
import type { Reporter } from './progress.ts';

export interface GlobalOptions {
  db: string;
  json?: boolean;
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
      throw new InvalidArgumentError(`expected a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}, got ${showValue(text)}`);
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

/** --db and --json, on every subcommand. */
export function withGlobals(cmd: Command): Command {
  return cmd.option('--db <file>', "the local SQLite file (default: the app's own, or $BACKFILL_RUNBOOK_DB)", defaultDbPath()).option('--json', 'one JSON object per line on stdout');
}
