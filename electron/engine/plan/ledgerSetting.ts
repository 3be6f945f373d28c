import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';

/**
 * The `ledger:` of a workspace config, resolved against the config's folder — read without
 * validating the rest of the file (loadConfig does that where connections are used), so the
 * commands that only read the ledger (`status`) start without the schema library. undefined
 * when the file is missing, unreadable or names no ledger.
 */
export function configuredLedger(configFile: string): string | undefined {
  let doc: unknown;
  try {
    doc = parse(readFileSync(configFile, 'utf8'));
  } catch {
    return undefined;
  }
  const ledger = (doc as { ledger?: unknown } | null)?.ledger;
  return typeof ledger === 'string' && ledger !== '' ? resolve(dirname(configFile), ledger) : undefined;
}
