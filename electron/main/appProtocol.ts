/**
 * The app:// protocol that serves the built renderer. Content never comes from file:// (which
 * would give the page the whole disk as its origin) nor from the network.
 *
 * **Important**: the URL is attacker-shaped input as far as this code is concerned. A request
 * is served only when, after decoding, it resolves to a file INSIDE the renderer folder: no
 * `..` escapes (plain, %-encoded or double-encoded), no backslashes, no NUL bytes, no other host.
 */
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CONTENT_SECURITY_POLICY } from '../../shared/csp.ts';
import { APP_HOST, APP_SCHEME } from './trustedSender.ts';

/** The file an app:// URL names inside `root`, or null when it must not be served. */
export function resolveAppPath(root: string, url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== `${APP_SCHEME}:` || parsed.host !== APP_HOST || parsed.username !== '' || parsed.password !== '') return null;
  let path: string;
  try {
    path = decodeURIComponent(parsed.pathname);
  } catch {
    return null; // malformed %-escape
  }
  // A '%' left after one decode is a double-encoded escape: never a name we ship.
  if (path.includes('\0') || path.includes('\\') || path.includes('%')) return null;
  if (path === '/' || path === '') path = '/index.html';
  const base = resolve(root);
  const file = resolve(base, `.${path}`);
  const rel = relative(base, file);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.split(sep).includes('..')) return null;
  return join(base, rel);
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

export function contentTypeOf(file: string): string {
  const dot = file.lastIndexOf('.');
  return TYPES[dot === -1 ? '' : file.slice(dot).toLowerCase()] ?? 'application/octet-stream';
}

/** Headers of every app:// response. */
export function appResponseHeaders(file: string): Record<string, string> {
  return {
    'content-type': contentTypeOf(file),
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}
