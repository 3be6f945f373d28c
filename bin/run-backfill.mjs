#!/usr/bin/env node
// Entry point of `run-backfill`. The bundle is built by `npm install` (prepare) and by
// `npm test`; run `npm run build:node` after editing electron/ by hand.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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
if (!QUICK.has(process.argv[2] ?? '')) {
  setFlagsFromString('--liftoff-only');
  setFlagsFromString('--semi-space-growth-factor=1');
}

const bundle = fileURLToPath(new URL('../dist/node/run-backfill.mjs', import.meta.url));
if (!existsSync(bundle)) {
  process.stderr.write('run-backfill: the command is not built yet. Run `npm install` (or `npm run build:node`) in the project folder.\n');
  process.exit(2);
}
await import(bundle);
