/** What browser mode's server needs of HTTP beyond node:http: the token check and a capped body. */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MAX_INPUT_CHARS } from '../main/handlers/ipc.ts';

/**
 * No call body is read beyond this. The handlers refuse inputs over MAX_INPUT_CHARS characters
 * as JSON; a UTF-8 body of that JSON is at most 4 bytes a character (escapes and spaces aside).
 */
export const MAX_BODY_BYTES = MAX_INPUT_CHARS * 4;

/** Constant-time comparison: the token is the only secret between the page and the engine. */
export function sameToken(given: string | null | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

/**
 * The body as text (null when empty), or undefined as soon as it is known to be over `limit`:
 * from its Content-Length, or when the bytes received pass it. **Hazard**: what is past the
 * limit is never buffered — the caller answers 413 and closes the connection.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<string | null | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData).pause();
        return resolve(undefined);
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(size === 0 ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
