// Bundles the command line (electron/cli) into dist/cli/run-backfill.mjs so that
// `run-backfill` starts fast (the crash-safety trials spawn it hundreds of times).
// Dependencies stay external: they are resolved from node_modules at run time.
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
