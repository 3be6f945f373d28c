// The V8 flags run-backfill starts with, per command: one module, used by bin/run-backfill.mjs
// and by the build's warm-up of the vendored packages' code caches (scripts/warmCodeCache.ts),
// which V8 rejects under any other flags.
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';

// **Important**: for the commands that move data, WebAssembly is compiled by V8's baseline
// compiler only, before any module is loaded. Node lexes every CommonJS package an ES module
// imports with a WebAssembly lexer, and the SQL parser (libpg-query) is WebAssembly too; their
// tier-up to the optimising compiler runs on a background thread whose scratch memory (about
// 20 MB) stays resident for the rest of the run, at random. A run needs neither at full speed
// (bench (e) and (j): peak RSS of an export). The commands that only read or sign start about
// 15 ms sooner with the tier-up (bench (h)), and hold little memory anyway.
//
// The same commands keep V8's young generation at its starting size (semi-space growth factor
// 1): streaming a partition allocates many short-lived objects (a COPY message, a chunk), and
// V8 would otherwise grow each semi-space to 16 MB and keep it resident. Measured on a
// 1M-row export: 160 → 120 MB peak for Parquet, 143 → 126 MB for gzipped JSON Lines, for
// about 5% more time in the scavenger (bench (e), (j)).
//
// **Hazard**: Node compiles its own built-in modules from a code cache made under V8's default
// flags, and V8 refuses that cache once any flag has been set at run time: a built-in loaded
// after setFlagsFromString is compiled from its source. Loading https (with tls and http) takes
// about 25 ms instead of 5 on this machine, http2 45 instead of 10. So the data profile loads
// the built-ins the data commands use before it sets its flags. BACKFILL_RUNBOOK_TRACE_VENDORED=1
// names every module of Node's own loaded after (electron/engine/vendored.ts); the lake tests
// expect no public built-in among them. Not undici (behind fetch and Response: notifications,
// HTTP probes, pg's probe for a Cloudflare runtime): about 50 ms to load even from the cache,
// which every S3-only run would pay.
const DATA_BUILTINS = [
  'node:assert',
  'node:child_process',
  'node:crypto',
  'node:dgram',
  'node:diagnostics_channel',
  'node:dns',
  'node:fs/promises',
  'node:http',
  'node:http2',
  'node:https',
  'node:net',
  'node:os',
  'node:perf_hooks',
  'node:process',
  'node:stream',
  'node:stream/promises',
  'node:stream/web',
  'node:timers',
  'node:tls',
  'node:util/types',
  'node:vm',
  'node:worker_threads',
  'node:zlib',
];

/** Set on globalThis: how many modules Node had loaded when the flags were set. */
const FLAGS_SET_AT = Symbol.for('backfill-runbook.v8-flags-set-at');

const QUICK = new Set([
  'status',
  'tune',
  'abandon',
  'notify',
  'identity',
  'signoff',
  'sign',
  'verify',
  'export',
  'archive',
  'help',
  '--help',
  '-h',
  '--version',
  '-V',
]);

/** 'quick' for the commands that only read or sign, 'data' for those that move data. */
export function v8ProfileFor(command) {
  return QUICK.has(command ?? '') ? 'quick' : 'data';
}

/**
 * Sets the profile's flags — after the built-ins above, before any other module is loaded — and
 * names the profile on globalThis.
 */
export function setV8Profile(profile) {
  if (profile === 'data') {
    const require = createRequire(import.meta.url);
    for (const name of DATA_BUILTINS) require(name);
    void globalThis.crypto; // Web Crypto loads on first use
    globalThis[FLAGS_SET_AT] = process.moduleLoadList.length;
    setFlagsFromString('--liftoff-only');
    setFlagsFromString('--semi-space-growth-factor=1');
  }
  // which code caches of the vendored packages match these flags (electron/engine/vendored.ts)
  globalThis[Symbol.for('backfill-runbook.v8-profile')] = profile;
}
