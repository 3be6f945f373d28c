// Bundles what runs in plain Node — the command line and browser mode — into dist/node/, plus
// browser mode's page script. Split into chunks loaded on demand, so `run-backfill status`
// starts without the executor, pg or the AWS SDK. Dependencies stay external: resolved from
// node_modules at run time. `npm install` (prepare), `npm start`, `npm test` and `npm run
// build` run it; `npm run build:node` after editing electron/ by hand.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const out = 'dist/node';

/** Keeps every package import external but the named packages. */
function bundleOnly(names) {
  return {
    name: 'bundle-only',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        const pkg = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
        return names.includes(pkg) || args.path.startsWith('node:') ? undefined : { path: args.path, external: true };
      });
    },
  };
}
rmSync(out, { recursive: true, force: true }); // no chunk of an older build left beside the new ones

await build({
  entryPoints: { 'run-backfill': 'electron/cli/main.ts', 'browser-mode': 'electron/browser/main.ts' },
  outdir: out,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Dependencies are resolved from node_modules at run time — except these pure-JS ones: bundled,
  // each loads as one file instead of dozens (yaml is 80+ modules, zod 100+). DuckDB's API (181
  // files, its native binding stays external) gets a chunk of its own, read only when a partition
  // needs DuckDB: about 50 ms sooner than from node_modules (bench (k)).
  plugins: [bundleOnly(['yaml', 'commander', 'zod', '@duckdb/node-api'])],
  // commander is CommonJS: its require('node:events') needs a require in these ES modules.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  sourcemap: 'linked',
  logLevel: 'warning',
});

// Browser mode's `window.runbook`, for the page: one plain script, no module system.
await build({
  entryPoints: ['electron/browser/pageBridge.ts'],
  outfile: `${out}/browser-bridge.js`,
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'chrome120',
  minify: true,
  logLevel: 'warning',
});

// The sandbox's S3 server runs as a plain Node script of its own (see s3Server.ts): beside the chunks.
mkdirSync(out, { recursive: true });
copyFileSync('electron/engine/sandbox/s3rverProcess.mjs', `${out}/s3rverProcess.mjs`);
