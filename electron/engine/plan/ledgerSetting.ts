import { dirname, resolve } from 'node:path';
import { InputError } from '../../../shared/errors.ts';
import { LIMITS } from '../../../shared/limits.ts';
import { readBoundedText } from '../input/boundedFile.ts';
import { EMPTY, parseBoundedYaml } from '../input/boundedYaml.ts';

/**
 * The `ledger:` of a workspace config, resolved against the config's folder — read without
 * validating the rest of the file (loadConfig does that where connections are used), so the
 * commands that only read the ledger (`status`) start without the schema library. The file is
 * read within the same limits as every config read (docs/limits.md): a config over its limit
 * or with broken YAML is refused here too (exit 2), never silently passed over. undefined when
 * the file is missing or names no ledger.
 */
export function configuredLedger(configFile: string): string | undefined {
  let text: string;
  try {
    text = readBoundedText(configFile, { what: 'config file', limit: LIMITS.yamlFileBytes });
  } catch (error) {
    if (error instanceof InputError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new InputError(`config file ${configFile} cannot be read: ${(error as Error).message}`, { file: configFile });
  }
  const doc = parseBoundedYaml(text, configFile, 'config file');
  if (doc === EMPTY) return undefined;
  const ledger = (doc as { ledger?: unknown } | null)?.ledger;
  if (ledger === undefined || ledger === null || ledger === '') return undefined;
  if (typeof ledger !== 'string') {
    throw new InputError(`${configFile}: ledger: expected a file path (text), got ${JSON.stringify(ledger)}`, {
      file: configFile,
      field: 'ledger',
      value: ledger,
    });
  }
  return resolve(dirname(configFile), ledger);
}
