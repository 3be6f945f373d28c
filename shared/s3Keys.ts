/**
 * What an S3 key may look like before any check compares it with a prefix (issue 13, item 3).
 *
 * **Important**: S3 itself treats a key as an opaque string, but everything around it does
 * not: S3-compatible servers that store objects as files resolve `..` against their folder
 * (s3rver wrote outside its directory), proxies and SDKs collapse `./` and `//`, and some
 * decode `%2e%2e` or turn `\` into `/`. A prefix guard that compares the raw text
 * (`events-backfill/../events/…` starts with `events-backfill/`) is then walked around. So a key
 * is refused unless it is already in the one form no layer rewrites: segments separated by
 * single slashes, none of them `.` or `..`, no backslash, no percent sign, no control character.
 * A prefix comparison between two such keys means what it says.
 */

export const MAX_S3_KEY_BYTES = 1024;

/** Why `key` is not a normalised S3 key, or undefined when it is. A trailing "/" (a folder stem) is allowed. */
export function s3KeyProblem(key: string): string | undefined {
  if (key === '') return 'is empty';
  if (key.includes('\\')) return 'contains a backslash: some servers and tools read it as "/"';
  if (key.includes('%')) return 'contains "%": a percent-encoding (such as %2e%2e or %2f) is decoded by some servers into another key';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'contains a control character';
  if (new TextEncoder().encode(key).length > MAX_S3_KEY_BYTES) return `is longer than S3's ${MAX_S3_KEY_BYTES} bytes`;
  if (key.startsWith('/')) return 'starts with "/": S3 keys do not, so nothing would ever match';
  const segments = key.split('/');
  if (segments.at(-1) === '') segments.pop(); // a folder stem's trailing slash
  for (const segment of segments) {
    if (segment === '') return 'has an empty segment ("//"): servers and tools collapse it into another key';
    if (segment === '.' || segment === '..') return `has a "${segment}" segment: a path walking out of its prefix`;
  }
  return undefined;
}

/** True when `key` lies under `prefix`, both normalised (so plain text comparison is exact). */
export function isUnderPrefix(key: string, prefix: string): boolean {
  return s3KeyProblem(key) === undefined && s3KeyProblem(prefix) === undefined && key.startsWith(prefix);
}
