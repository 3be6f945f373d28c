import { readFileSync } from 'node:fs';

/**
 * The product's version, from its package.json. Every build of this module sits two folders
 * below the project (electron/engine/, dist/node/, .vite/build/), so one relative path serves
 * the sources and the bundles alike.
 */
export function appVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
