#!/usr/bin/env node
// Entry point of `run-backfill`. The bundle is built by `npm install` (prepare) and by
// `npm test`; run `npm run build:node` after editing electron/ by hand.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setV8Profile, v8ProfileFor } from './v8Profile.mjs';

setV8Profile(v8ProfileFor(process.argv[2]));

const bundle = fileURLToPath(new URL('../dist/node/run-backfill.mjs', import.meta.url));
if (!existsSync(bundle)) {
  process.stderr.write('run-backfill: the command is not built yet. Run `npm install` (or `npm run build:node`) in the project folder.\n');
  process.exit(2);
}
await import(bundle);
