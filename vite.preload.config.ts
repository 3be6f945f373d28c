// The preload (electron/preload/index.ts). Sandboxed preloads are plain scripts that may only
// require('electron'): one CommonJS file, everything else (the contract, zod) bundled in.
import { defineConfig } from 'vite';

export default defineConfig({
  build: {
    outDir: '.vite/build',
    emptyOutDir: false,
    target: 'chrome130',
    minify: false,
    sourcemap: true,
    rollupOptions: {
      input: 'electron/preload/index.ts',
      external: ['electron', 'electron/renderer'],
      output: { format: 'cjs', entryFileNames: 'preload.cjs' },
    },
  },
});
