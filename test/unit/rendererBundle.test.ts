/**
 * What the built bundles may contain. The renderer is web content: no `require('electron')`,
 * no database driver, no AWS SDK, no Node built-in may end up in it (lint forbids the imports;
 * this proves the bundle). The preload may require 'electron' and nothing else. Built here,
 * with the project's own Vite configs, into a temporary folder.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../shared/csp.ts';

let dir: string;
let rendererJs: string;
let indexHtml: string;
let preload: string;

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bfr-bundle-'));
  await build({ configFile: 'vite.renderer.config.ts', logLevel: 'silent', build: { outDir: join(dir, 'renderer'), emptyOutDir: true } });
  await build({ configFile: 'vite.preload.config.ts', logLevel: 'silent', build: { outDir: join(dir, 'build'), sourcemap: false } });
  const files = filesUnder(join(dir, 'renderer'));
  rendererJs = files
    .filter((f) => f.endsWith('.js'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  indexHtml = readFileSync(join(dir, 'renderer', 'index.html'), 'utf8');
  preload = readFileSync(join(dir, 'build', 'preload.cjs'), 'utf8');
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the renderer bundle', () => {
  it('was built', () => {
    expect(rendererJs.length).toBeGreaterThan(10_000);
  });

  it.each<[string, RegExp]>([
    ["require('electron')", /require\(\s*["'`]electron["'`]\s*\)/],
    ["import from 'electron'", /from\s*["'`]electron["'`]|import\(\s*["'`]electron/],
    ['ipcRenderer', /ipcRenderer/],
    ['the pg driver', /pg-protocol|pg-connection-string|from\s*["'`]pg["'`]|require\(\s*["'`]pg["'`]\)|PGSSLMODE|libpq/],
    ['the AWS SDK', /@aws-sdk|S3Client|aws4_request|AWS_ACCESS_KEY_ID/],
    ['better-sqlite3', /better-sqlite3|better_sqlite3/],
    ['a Node built-in', /require\(\s*["'`](node:)?(fs|child_process|net|os|path|crypto)["'`]\)|from\s*["'`]node:/],
  ])('contains no %s', (_what, pattern) => {
    expect(rendererJs.match(pattern)?.[0] ?? null).toBeNull();
  });

  it('index.html carries the same CSP main and the harness send', () => {
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(indexHtml);
    expect(meta?.[1]).toBe(CONTENT_SECURITY_POLICY);
    expect(indexHtml).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
  });
});

describe('the preload bundle', () => {
  it('requires electron and nothing else', () => {
    const required = [...preload.matchAll(/require\(\s*["'`]([^"'`]+)["'`]\s*\)/g)].map((m) => m[1]);
    expect([...new Set(required)]).toEqual(['electron']);
  });

  it('hands the page window.runbook through contextBridge, never ipcRenderer itself', () => {
    expect(preload).toMatch(/exposeInMainWorld\(\s*["']runbook["']/);
    expect(preload).not.toMatch(/exposeInMainWorld\(\s*["']ipcRenderer/);
  });
});
