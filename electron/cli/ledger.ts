import { existsSync } from 'node:fs';
import { defaultDbPath } from './paths.ts';
import type { GlobalOptions } from './program.ts';

/** The ledger a command opens: --db; else the workspace config's `ledger:`; else the app's own. */
export async function ledgerFile(g: GlobalOptions): Promise<string> {
  if (g.db) return g.db;
  if (!g.config || !existsSync(g.config)) return defaultDbPath();
  // The YAML parser only when there is a config to read.
  const { configuredLedger } = await import('../engine/plan/ledgerSetting.ts');
  return configuredLedger(g.config) ?? defaultDbPath();
}
