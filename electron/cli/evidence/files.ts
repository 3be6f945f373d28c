/** Reading the files users hand to evidence commands, and writing results to --out or stdout. */
import { writeFileSync } from 'node:fs';
import { InputError } from '../../../shared/errors.ts';
import { readBoundedFile } from '../../engine/input/boundedFile.ts';

/** A file a user hands a command, never more than `limit` bytes (shared/limits.ts). */
export function readInput(file: string, what: string, limit: number): Buffer {
  try {
    return readBoundedFile(file, { what, limit });
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(code === 'ENOENT' ? `${what} ${file} not found` : `cannot read ${what} ${file}: ${(err as Error).message}`, {
      file,
    });
  }
}

/**
 * Data goes to --out FILE, or to stdout so it can be redirected (`> sig.json`); the human
 * sentence about it then goes to stderr, never mixed into the data.
 */
export function writeOutput(data: string | Buffer, out: string | undefined): void {
  if (out) writeFileSync(out, data);
  else process.stdout.write(data);
}

export function notice(text: string): void {
  process.stderr.write(`${text}\n`);
}
