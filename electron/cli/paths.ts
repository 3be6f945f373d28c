import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The app's own SQLite file, where Electron keeps userData on each OS, so the CLI and the app
 * share one ledger unless --db or BACKFILL_RUNBOOK_DB says otherwise.
 */
export function defaultDbPath(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env.BACKFILL_RUNBOOK_DB) return env.BACKFILL_RUNBOOK_DB;
  const home = homedir();
  const base =
    platform === 'win32'
      ? (env.APPDATA ?? join(home, 'AppData', 'Roaming'))
      : platform === 'darwin'
        ? join(home, 'Library', 'Application Support')
        : (env.XDG_CONFIG_HOME ?? join(home, '.config'));
  return join(base, 'backfill-runbook', 'runbook.sqlite');
}
