/**
 * A workspace: the folder an operator works in (backfill.config.yaml, jobs/, the SQLite ledger)
 * or the Sandbox, the training workspace the app opens when nothing is configured. Both give
 * the same shape, so every screen works the same way on either; only the label differs, and
 * "Sandbox" is shown wherever the sandbox is in use.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { WorkspaceInfo } from '../../../shared/contractTypes.ts';
import { InputError } from '../../../shared/errors.ts';
import type { Config } from '../../../shared/schemas.ts';
import { loadConfig } from '../plan/load.ts';
import { startSandbox } from '../sandbox/index.ts';
import type { NodeSpawner } from '../sandbox/s3Server.ts';

export interface Workspace {
  info: WorkspaceInfo;
  /** connections from the config file (the app adds its own from SQLite) */
  config: Config;
  stop(): Promise<void>;
}

const EMPTY: Config = { connections: {}, sandbox: false };

/**
 * A folder workspace. Its ledger is the config's `ledger` (relative to the config), else the
 * app's own ledger — the same rule as the CLI, so both see one history.
 */
export function folderWorkspace(dir: string, defaultDb: string): Workspace {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new InputError(`workspace folder ${root} does not exist`, {
      field: 'dir',
      value: dir,
      hint: 'choose a folder holding backfill.config.yaml and jobs/',
    });
  }
  const configFile = join(root, 'backfill.config.yaml');
  const jobsDir = join(root, 'jobs');
  if (!existsSync(configFile) && !existsSync(jobsDir)) {
    throw new InputError(`${root} is not a workspace: it has neither backfill.config.yaml nor a jobs/ folder`, {
      field: 'dir',
      value: dir,
      hint: 'choose a folder holding backfill.config.yaml and jobs/',
    });
  }
  const config = existsSync(configFile) ? loadConfig(configFile) : EMPTY;
  const dbFile = config.ledger ? resolve(dirname(configFile), config.ledger) : defaultDb;
  return {
    info: {
      label: config.sandbox ? 'Sandbox' : basename(root),
      kind: config.sandbox ? 'sandbox' : 'folder',
      dir: root,
      dbFile,
      jobsDir,
      configFile: existsSync(configFile) ? configFile : null,
    },
    config,
    stop: () => Promise.resolve(),
  };
}

/** The Sandbox: embedded PostgreSQL with training data, its own jobs and its own ledger. */
export async function sandboxWorkspace(dir: string, onLog?: (line: string) => void, spawnNode?: NodeSpawner): Promise<Workspace> {
  const sandbox = await startSandbox({ dir, onLog, spawnNode });
  return {
    info: {
      label: 'Sandbox',
      kind: 'sandbox',
      dir: sandbox.dir,
      dbFile: sandbox.dbFile,
      jobsDir: sandbox.jobsDir,
      configFile: sandbox.configFile,
    },
    config: sandbox.config,
    stop: () => sandbox.stop(),
  };
}

/** Where the CLI and the app keep signing keys: $BACKFILL_RUNBOOK_KEYS, else keys/ beside the ledger. */
export function keysDir(dbFile: string, env: NodeJS.ProcessEnv = process.env): string {
  return env.BACKFILL_RUNBOOK_KEYS ?? join(dirname(resolve(dbFile)), 'keys');
}
