import { existsSync } from 'node:fs';
import { configuredLedger } from '../engine/plan/ledgerSetting.ts';
import { defaultDbPath } from './paths.ts';
import type { GlobalOptions } from './program.ts';

/** The ledger a command opens: --db; else the workspace config's `ledger:`; else the app's own. */
export function ledgerFile(g: GlobalOptions): string {
  if (g.db) return g.db;
  const fromConfig = g.config && existsSync(g.config) ? configuredLedger(g.config) : undefined;
  return fromConfig ?? defaultDbPath();
}
