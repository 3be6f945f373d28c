import type { RegisterCommand } from '../program.ts';
import { registerCheck } from './check.ts';
import { registerRun } from './run.ts';
import { registerSandbox } from './sandbox.ts';
import { registerStatus } from './status.ts';

/** Every subcommand of run-backfill, in the order `--help` lists them. Add one line per module. */
export const COMMANDS: readonly RegisterCommand[] = [registerRun, registerCheck, registerStatus, registerSandbox];
