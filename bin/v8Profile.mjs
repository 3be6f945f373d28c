// The V8 flags run-backfill starts with, per command: one module, used by bin/run-backfill.mjs
// and by the build's warm-up of the vendored packages' code caches (scripts/warmCodeCache.ts),
// which V8 rejects under any other flags.
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

/** Sets the profile's flags, before any module is loaded, and names it on globalThis. */
export function setV8Profile(profile) {
  if (profile === 'data') {
    setFlagsFromString('--liftoff-only');
    setFlagsFromString('--semi-space-growth-factor=1');
  }
  // which code caches of the vendored packages match these flags (electron/engine/vendored.ts)
  globalThis[Symbol.for('backfill-runbook.v8-profile')] = profile;
}
