// Bundles what runs in plain Node — the command line and browser mode — into dist/node/, plus
// browser mode's page script. Split into chunks loaded on demand, so `run-backfill status`
// starts without the executor, pg or the AWS SDK. Dependencies stay external: resolved from
// node_modules at run time. `npm install` (prepare), `npm start`, `npm test` and `npm run
// build` run it; `npm run build:node` after editing electron/ by hand.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { build } from 'esbuild';

const out = 'dist/node';
const VENDORED_TS = resolve('electron/engine/vendored.ts');
/** The packages imported by name that come from dist/node/vendor/ (see electron/engine/vendored.ts). */
const VENDORED_IMPORTS = ['zod', 'yaml', 'commander'];
/**
 * CommonJS packages the ES modules import: each becomes a require. Node would otherwise read
 * every one with its CommonJS lexer at each start, a module it compiles from source when V8
 * flags are set (bin/v8Profile.mjs): about 10 ms for better-sqlite3 alone.
 */
const REQUIRED_IMPORTS = ['better-sqlite3', 'canonicalize'];
/** What electron/engine/targets/s3 takes from the AWS SDK: the rest of the S3 client is left out. */
const SDK_EXPORTS = [
  'S3Client',
  'AbortMultipartUploadCommand',
  'CompleteMultipartUploadCommand',
  'CopyObjectCommand',
  'CreateBucketCommand',
  'CreateMultipartUploadCommand',
  'DeleteObjectsCommand',
  'GetObjectCommand',
  'GetObjectTaggingCommand',
  'HeadBucketCommand',
  'HeadObjectCommand',
  'ListObjectsV2Command',
  'PutObjectCommand',
  'PutObjectTaggingCommand',
  'UploadPartCommand',
];

/**
 * Every package import stays external — resolved from node_modules at run time — but the
 * vendored ones, which become `vendored(name)`: a CommonJS module of the bundle whose exports
 * come from dist/node/vendor/<name>.cjs (esbuild reads named imports from it as properties).
 */
const packages = {
  name: 'packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return undefined;
      if (VENDORED_IMPORTS.includes(args.path)) return { path: args.path, namespace: 'vendored' };
      if (REQUIRED_IMPORTS.includes(args.path) && args.namespace !== 'required') return { path: args.path, namespace: 'required' };
      // a subpath would load a second copy from node_modules, whose classes the first's
      // instanceof checks (zod's schemas in plan/load.ts) would not know
      const sub = VENDORED_IMPORTS.find((name) => args.path.startsWith(`${name}/`));
      if (sub)
        return {
          errors: [{ text: `import "${args.path}": import "${sub}" itself, which the build vendors (electron/engine/vendored.ts)` }],
        };
      return { path: args.path, external: true };
    });
    b.onLoad({ filter: /.*/, namespace: 'required' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
      resolveDir: resolve('.'),
    }));
    b.onLoad({ filter: /.*/, namespace: 'vendored' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(VENDORED_TS)}).vendored(${JSON.stringify(args.path)});`,
      loader: 'js',
      resolveDir: resolve('.'),
    }));
  },
};
// commander is CommonJS, like the vendored bundles' wrappers: a require in these ES modules.
const REQUIRE_BANNER = "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

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
  plugins: [packages],
  banner: { js: REQUIRE_BANNER },
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

// The vendored packages: each one CommonJS file, from the package's own CommonJS build. One file
// instead of dozens (yaml is 80+ modules, zod 100+, DuckDB's API 181, the S3 client 29 larger
// ones), and a file V8 can compile from a code cache. Names are kept: errors are told apart by
// name (the SDK's NoSuchKey, commander's CommanderError).
// **Hazard**: a bundle runs as a vm.Script, where `import()` has no loader and throws
// (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING). The S3 client imports node:async_hooks that way when
// it runs inside AWS Lambda (@aws/lambda-invoke-store), and its ES builds import node:http so for
// the EC2 metadata service. So an import() of a Node built-in becomes a require, and any other
// import() fails the build.
async function vendorBundle(name, contents, external = []) {
  const outfile = `${out}/vendor/${name.replace(/^@/, '').replace(/\//g, '+')}.cjs`;
  await build({
    stdin: { contents, resolveDir: resolve('.'), loader: 'js', sourcefile: `vendor:${name}` },
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // the packages' CommonJS builds throughout: no "module" condition (esbuild's default), under
    // which @smithy/core's submodules would come from their ES builds beside the rest's CommonJS
    mainFields: ['main'],
    conditions: [],
    keepNames: true,
    external,
    logLevel: 'warning',
  });
  const text = readFileSync(outfile, 'utf8').replace(
    /\bimport\(\s*(["'])(node:[a-z_/]+)\1\s*\)/g,
    (_, quote, builtin) => `Promise.resolve().then(() => require(${quote}${builtin}${quote}))`,
  );
  const left = /\bimport\(\s*["'`]/.exec(text);
  if (left) throw new Error(`${outfile}: a dynamic import() a vm.Script cannot run: ${text.slice(left.index, left.index + 80)}`);
  writeFileSync(outfile, text);
}
await Promise.all([
  ...VENDORED_IMPORTS.map((name) => vendorBundle(name, `module.exports = require(${JSON.stringify(name)});`)),
  // the native binding stays in node_modules
  vendorBundle('@duckdb/node-api', "module.exports = require('@duckdb/node-api');", ['@duckdb/node-bindings']),
  vendorBundle(
    '@aws-sdk/client-s3',
    `const s3 = require('@aws-sdk/client-s3');\nmodule.exports = { ${SDK_EXPORTS.map((e) => `${e}: s3.${e}`).join(', ')} };`,
  ),
]);

// Their V8 code caches, one per V8 profile of bin/run-backfill.mjs, made by a warm-up that does
// what a run does with them (scripts/warmCodeCache.ts). A missing cache fails nothing: the
// package is then compiled from its bundle at each start, as before.
await build({
  entryPoints: ['scripts/warmCodeCache.ts'],
  outfile: `${out}/warm-code-cache.mjs`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  plugins: [packages],
  banner: { js: REQUIRE_BANNER },
  logLevel: 'warning',
});
try {
  for (const profile of ['data', 'quick']) {
    const r = spawnSync(process.execPath, [`${out}/warm-code-cache.mjs`, profile], { encoding: 'utf8', timeout: 120_000 });
    if (r.stderr) process.stderr.write(r.stderr);
    if (r.status !== 0)
      process.stderr.write(`build-node: no code cache for the ${profile} profile (${r.error?.message ?? `exit ${r.status}`})\n`);
  }
} finally {
  rmSync(`${out}/warm-code-cache.mjs`, { force: true });
}

// The sandbox's S3 server runs as a plain Node script of its own (see s3Server.ts): beside the chunks.
mkdirSync(out, { recursive: true });
copyFileSync('electron/engine/sandbox/s3rverProcess.mjs', `${out}/s3rverProcess.mjs`);
