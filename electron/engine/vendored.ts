/**
 * Third-party packages as the built command (dist/node) loads them: each from one CommonJS
 * bundle of its own in dist/node/vendor/, compiled from a V8 code cache that the build wrote
 * beside it (scripts/build-node.mjs, scripts/warmCodeCache.ts). A start then neither parses
 * the package's source nor compiles its functions one by one as they first run: the cache holds
 * the bytecode of every function the build's warm-up ran. Measured on the lake run of bench (k)
 * with its endpoint down (start-up only, 10 alternating pairs): 0.80 → 0.67 s of CPU, and the
 * first S3 request answered in 11 ms instead of 75–85 ms, its code no longer compiled on the way.
 *
 * Anywhere else — the app's own build, the tests running the sources, a build without the file —
 * a package comes from node_modules, as before, with the same exports.
 *
 * **Hazard**: V8 takes a cache whose source has the same *length*, not the same bytes, and
 * rejects one made under other V8 flags. So each cache file starts with the sha256 of the bundle
 * it was made from (checked here before V8 sees it), and there is one per V8 profile of
 * bin/run-backfill.mjs (bin/v8Profile.mjs), which names the profile it set on globalThis. Without
 * a profile, no cache is read. A cache V8 rejects anyway only costs the compile it was to save.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/** Set on globalThis by bin/v8Profile.mjs: the name of the V8 flags the process runs with. */
export const V8_PROFILE = Symbol.for('backfill-runbook.v8-profile');

/** The packages the build vendors: the CLI's parser and schemas, and what a lake run loads. */
export const VENDORED = ['zod', 'yaml', 'commander', '@duckdb/node-api', '@aws-sdk/client-s3'] as const;
export type VendoredName = (typeof VENDORED)[number];

export interface Compiled {
  script: Script;
  hash: Buffer;
  cacheFile: string | undefined;
  fromCache: boolean;
}

const here = dirname(fileURLToPath(import.meta.url));
/** A diagnostic: where each package came from, on stderr at exit (vendorOrigins). */
const TRACE = process.env.BACKFILL_RUNBOOK_TRACE_VENDORED === '1';
const fromNodeModules = createRequire(import.meta.url);
const modules = new Map<string, unknown>();
const compiled = new Map<string, Compiled>();

/** dist/node/vendor/<file>: `@aws-sdk/client-s3` → `aws-sdk+client-s3.cjs`. */
export function vendorFile(name: string): string {
  return `vendor/${name.replace(/^@/, '').replace(/\//g, '+')}.cjs`;
}

export function codeCacheFile(bundle: string, profile: unknown): string | undefined {
  return typeof profile === 'string' && /^[a-z]+$/.test(profile) ? `${bundle}.${profile}.v8cache` : undefined;
}

/** The package's exports: from its vendored bundle where the build made one, else node_modules. */
export function vendored<T>(name: VendoredName): T {
  if (TRACE && modules.size === 0) {
    process.once('exit', () =>
      process.stderr.write(
        `vendored: ${JSON.stringify(vendorOrigins())}\nbuilt-ins after the V8 flags: ${JSON.stringify(builtinsAfterFlags())}\n`,
      ),
    );
  }
  if (!modules.has(name)) modules.set(name, fromBundle(name) ?? fromNodeModules(name));
  return modules.get(name) as T;
}

function fromBundle(name: string): unknown {
  const loaded = loadBundle(join(here, vendorFile(name)), (globalThis as Record<symbol, unknown>)[V8_PROFILE]);
  if (!loaded) return undefined; // not the built command: node_modules
  compiled.set(name, loaded.compiled);
  return loaded.exports;
}

/**
 * Runs a CommonJS bundle, compiled from its code cache for `profile` when there is one made from
 * these very bytes. Undefined when the file does not exist.
 */
export function loadBundle(file: string, profile: unknown): { exports: unknown; compiled: Compiled } | undefined {
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const hash = createHash('sha256').update(source).digest();
  const cacheFile = codeCacheFile(file, profile);
  let cachedData: Buffer | undefined;
  if (cacheFile !== undefined) {
    try {
      const cache = readFileSync(cacheFile);
      if (cache.subarray(0, hash.length).equals(hash)) cachedData = cache.subarray(hash.length);
    } catch {
      // no cache for this profile: compiled from the source
    }
  }
  // the wrapper Node's own loader puts around a CommonJS module
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  const module = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, dirname(file));
  return {
    exports: module.exports,
    compiled: { script, hash, cacheFile, fromCache: cachedData !== undefined && !script.cachedDataRejected },
  };
}

/** Writes a bundle's code cache as V8 has compiled it so far, whole or not at all (a rename). */
export function writeCodeCache(c: Compiled): string | undefined {
  if (c.cacheFile === undefined) return undefined;
  const temp = `${c.cacheFile}.${process.pid}.tmp`;
  writeFileSync(temp, Buffer.concat([c.hash, c.script.createCachedData()]));
  renameSync(temp, c.cacheFile);
  return c.cacheFile;
}

/** Where each package this process loaded came from: for the build's check and for tests. */
export function vendorOrigins(): Record<string, 'node_modules' | 'bundle' | 'bundle+cache'> {
  const origins: Record<string, 'node_modules' | 'bundle' | 'bundle+cache'> = {};
  for (const name of modules.keys()) {
    const c = compiled.get(name);
    origins[name] = !c ? 'node_modules' : c.fromCache ? 'bundle+cache' : 'bundle';
  }
  return origins;
}

/** Set on globalThis by bin/v8Profile.mjs: how many modules Node had loaded when it set V8 flags. */
const FLAGS_SET_AT = Symbol.for('backfill-runbook.v8-flags-set-at');

/**
 * Node's own modules this process loaded after bin/v8Profile.mjs set V8 flags, each compiled
 * from its source: V8 refuses Node's code cache under changed flags. Public ones (`https`) and
 * internal ones (`internal/deps/undici/undici`, behind fetch); empty when no flags were set.
 */
export function builtinsAfterFlags(): string[] {
  const at = (globalThis as Record<symbol, unknown>)[FLAGS_SET_AT];
  if (typeof at !== 'number') return [];
  const loaded = (process as unknown as { moduleLoadList: string[] }).moduleLoadList.slice(at);
  return loaded.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
}

/**
 * For the build's warm-up: writes the code cache of every bundle this process loaded, as V8 has
 * compiled it so far — after the warm-up's work, so the functions it ran are in it. Returns the
 * files written.
 */
export function writeCodeCaches(): string[] {
  return [...compiled.values()].map(writeCodeCache).filter((f): f is string => f !== undefined);
}
