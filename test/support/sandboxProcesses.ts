/** The server processes of one sandbox: PostgreSQL on its data folder, s3rver on its lake folder. */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { postgresDataDir } from '../../electron/engine/sandbox/index.ts';

export function sandboxServerProcesses(dir: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', 'postgres|s3rverProcess'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(postgresDataDir(dir)) || line.includes(join(dir, 's3')));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}
