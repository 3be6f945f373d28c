// Bundles the command line (electron/cli) into dist/cli/run-backfill.mjs so that
// `run-backfill` starts fast (the crash-safety trials spawn it hundreds of times).
// Dependencies stay external: they are resolved from node_modules at run time.
import { copyFileSync } from 'node:fs';
import { build } from 'esbuild';

await build({
  entryPoints: ['electron/cli/main.ts'],
  outfile: 'dist/cli/run-backfill.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});

// The sandbox's S3 server runs as a plain Node script of its own (see s3Server.ts): beside the bundle.
copyFileSync('electron/engine/sandbox/s3rverProcess.mjs', 'dist/cli/s3rverProcess.mjs');
