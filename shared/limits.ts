/**
 * Every limit on the size of what a user, a file or the renderer hands us, in one place
 * (docs/limits.md explains each). Over a limit is an InputError naming the file or call, the
 * field, the size and the limit: exit 2 on the command line, `{ ok: false, error: { code:
 * 'input' } }` in the app. Never a frozen app or a process that runs out of memory.
 *
 * **Important**: the YAML limits are what keeps a job parse to a moment on the app's main
 * process: the `yaml` package spends a few microseconds per token, so the token cap (not the
 * byte cap) bounds the time; `npm run bench` prints the parse time of the largest accepted file.
 */
import { InputError } from './errors.ts';

export const KiB = 1024;
export const MiB = 1024 * KiB;

export const LIMITS = {
  /** A job, plan or config file (YAML): bytes on disk. */
  yamlFileBytes: 256 * KiB,
  /** …and YAML tokens (scalars, indicators, indents): what the parse time grows with. */
  yamlTokens: 10_000,
  /** …and nesting of mappings and lists. */
  yamlDepth: 64,
  /** …and alias expansion (the `yaml` package's maxAliasCount: "billion laughs"). */
  yamlAliases: 100,
  /** A note bundle (`export --format json`) that verify reads. */
  bundleBytes: 64 * MiB,
  /** A run archive (`.bfr`) on disk, compressed. */
  archiveFileBytes: 64 * MiB,
  /** …and once decompressed: decompression stops at this many bytes. */
  archiveJsonBytes: 96 * MiB,
  /** Nesting of any JSON file we read (bundles, archives, requests, signatures, key files). */
  jsonDepth: 64,
  /** A sign-off request (`signoff request`): the plan, the job and the dry run's evidence. */
  signoffRequestBytes: 32 * MiB,
  /** A sign-off signature file (`sign`), as a file or as text pasted into the app. */
  signatureFileBytes: 64 * KiB,
  /** A PEM public key (`--trust`, `identity register --public-key`). */
  publicKeyBytes: 16 * KiB,
  /** A private key file of the key vault. */
  keyFileBytes: 64 * KiB,
  /** The input of one call from the renderer (IPC or browser mode), as JSON characters. */
  ipcInputChars: 2_000_000,
} as const;

export type LimitName = keyof typeof LIMITS;

/** "27.5 MiB (28,835,840 bytes)": both, so a reader can compare with `ls -l`. */
export function showBytes(bytes: number): string {
  const exact = `${bytes.toLocaleString('en-US')} bytes`;
  if (bytes < KiB) return exact;
  const [value, unit] = bytes < MiB ? [bytes / KiB, 'KiB'] : [bytes / MiB, 'MiB'];
  return `${Number(value.toFixed(1))} ${unit} (${exact})`;
}

export interface OverLimit {
  /** The file (or call) the input came from. */
  file?: string;
  /** The field, when one field is too large; omitted for a whole file. */
  field?: string;
  /** What the input is: "job file", "run archive once decompressed". */
  what: string;
  /** The size found ("at least" when reading stopped at the limit). */
  size: number;
  atLeast?: boolean;
  limit: number;
  unit: 'bytes' | 'tokens' | 'levels' | 'characters';
  /** Where in the input the limit was crossed: "line 1634". */
  at?: string;
  hint?: string;
}

/** The one wording of "over the limit", for every input. */
export function overLimitError(o: OverLimit): InputError {
  const amount = (n: number) => (o.unit === 'bytes' ? showBytes(n) : `${n.toLocaleString('en-US')} ${o.unit}`);
  const where = [o.file, o.field ? `field "${o.field}"` : undefined].filter(Boolean).join(': ');
  const message = `${where ? `${where}: ` : ''}the ${o.what} is ${o.atLeast ? 'at least ' : ''}${amount(o.size)}, over the limit of ${amount(o.limit)}${o.at ? ` (reached at ${o.at})` : ''}`;
  return new InputError(message, {
    file: o.file,
    field: o.field,
    value: o.size,
    hint: o.hint ?? 'the limits and why they are set where they are: docs/limits.md',
  });
}
