import type { RegisterCommand } from '../program.ts';
import { registerCheck } from './check.ts';
import { registerEvidence } from './evidence.ts';
import { registerLake } from './lake.ts';
import { registerProve } from './prove.ts';
import { registerRun } from './run.ts';
import { registerSnapshot } from './snapshot.ts';
import { registerRestore } from './restore.ts';
import { registerSandbox } from './sandbox.ts';
import { registerStatus } from './status.ts';
import { registerTune } from './tune.ts';

/** Every subcommand of run-backfill, in the order `--help` lists them. Add one line per module. */
export const COMMANDS: readonly RegisterCommand[] = [
  registerRun,
  registerCheck,
  registerProve,
  registerStatus,
  registerTune,
  registerSandbox,
  registerEvidence,
  registerSnapshot,
  registerRestore,
  registerLake,
];
