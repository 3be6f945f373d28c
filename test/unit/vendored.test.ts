// The vendored packages' loader (electron/engine/vendored.ts): a CommonJS bundle compiled from
// its V8 code cache only when the cache was made from the same bytes, under the same profile.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { Script } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codeCacheFile, loadBundle, vendorFile, writeCodeCache } from '../../electron/engine/vendored.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bfr-vendored-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A bundle whose function answers `word`; the same length for every four-letter word. */
function bundle(word: string): string {
  const file = join(dir, 'pkg.cjs');
  writeFileSync(
    file,
    `"use strict";\nconst path = require('node:path');\nmodule.exports = { answer: () => '${word}', base: path.basename(__filename), dir: __dirname };\n`,
  );
  return file;
}

type Answer = { answer: () => string; base: string; dir: string };

let copies = 0;
/**
 * The bundle and its caches under another name. **Important**: V8 keeps the scripts this process
 * compiled and hands the same one back for the same source and file name, ignoring any cache
 * given; a new name makes the next load read its cache as a new process would.
 */
function elsewhere(file: string, profile: string): string {
  const copy = join(dir, `copy-${++copies}.cjs`);
  copyFileSync(file, copy);
  if (existsSync(`${file}.${profile}.v8cache`)) copyFileSync(`${file}.${profile}.v8cache`, `${copy}.${profile}.v8cache`);
  return copy;
}

describe('vendored', () => {
  it.each([
    ['zod', 'vendor/zod.cjs'],
    ['@duckdb/node-api', 'vendor/duckdb+node-api.cjs'],
    ['@aws-sdk/client-s3', 'vendor/aws-sdk+client-s3.cjs'],
  ])('%s is bundled as %s', (name, file) => {
    expect(vendorFile(name)).toBe(file);
  });

  it.each([
    ['data', '/x/a.cjs.data.v8cache'],
    ['quick', '/x/a.cjs.quick.v8cache'],
    [undefined, undefined],
    ['', undefined],
    ['../etc', undefined],
    [42, undefined],
  ])('the cache for profile %j is %j', (profile, file) => {
    expect(codeCacheFile('/x/a.cjs', profile)).toBe(file);
  });

  it('runs a bundle as a CommonJS module: require, __filename and __dirname are its own', () => {
    const loaded = loadBundle(bundle('good'), undefined);
    const exports = loaded?.exports as Answer;
    expect(exports.answer()).toBe('good');
    expect(exports.base).toBe('pkg.cjs');
    expect(exports.dir).toBe(dir);
    expect(loaded?.compiled.fromCache).toBe(false);
    expect(loaded?.compiled.cacheFile).toBeUndefined();
  });

  it('is undefined for a bundle that does not exist: the package then comes from node_modules', () => {
    expect(loadBundle(join(dir, 'missing.cjs'), 'data')).toBeUndefined();
  });

  it('compiles from the cache written for its profile, and the cache starts with the bundle hash', () => {
    const file = bundle('good');
    const first = loadBundle(file, 'unit');
    expect(first?.compiled.fromCache).toBe(false);
    const written = writeCodeCache(first!.compiled);
    expect(written).toBe(`${file}.unit.v8cache`);
    expect(readFileSync(written!).subarray(0, 32).equals(first!.compiled.hash)).toBe(true);

    const second = loadBundle(elsewhere(file, 'unit'), 'unit');
    expect(second?.compiled.fromCache).toBe(true);
    expect((second?.exports as Answer).answer()).toBe('good');
    // another profile has no cache of its own: compiled from the source
    expect(loadBundle(elsewhere(file, 'other'), 'other')?.compiled.fromCache).toBe(false);
  });

  it('never runs a cache made from other bytes of the same length', () => {
    const file = bundle('old1');
    const first = loadBundle(file, 'unit');
    expect((first?.exports as Answer).answer()).toBe('old1'); // compiled, so in the cache
    writeCodeCache(first!.compiled);
    const cache = readFileSync(`${file}.unit.v8cache`);
    bundle('new2'); // same length, other code
    const moved = elsewhere(file, 'unit');

    // the hazard: V8 itself checks the length only, and would run the old code
    const wrapped = `(function (exports, require, module, __filename, __dirname) {${readFileSync(moved, 'utf8')}\n})`;
    const raw = new Script(wrapped, { filename: join(dir, 'raw.cjs'), cachedData: cache.subarray(32) });
    const module = { exports: {} as Answer };
    (raw.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(moved), module, moved, dir);
    expect(raw.cachedDataRejected).toBe(false);
    expect(module.exports.answer()).toBe('old1');

    // the loader sees the hash differ and compiles what the file says
    const loaded = loadBundle(moved, 'unit');
    expect(loaded?.compiled.fromCache).toBe(false);
    expect((loaded?.exports as Answer).answer()).toBe('new2');
  });

  it('compiles from the source when V8 rejects the cache', () => {
    const file = bundle('good');
    const first = loadBundle(file, 'unit');
    writeFileSync(`${file}.unit.v8cache`, Buffer.concat([first!.compiled.hash, Buffer.from('not a code cache at all')]));
    const loaded = loadBundle(elsewhere(file, 'unit'), 'unit');
    expect(loaded?.compiled.fromCache).toBe(false);
    expect((loaded?.exports as Answer).answer()).toBe('good');
  });
});
