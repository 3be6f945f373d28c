// The renderer (renderer/): React, built to .vite/renderer/main_window, served by main's app://
// protocol and by the test harness. The CSP <meta> comes from shared/csp.ts, the one definition
// main and the harness also send as a header. Dev mode (Vite's HMR needs inline scripts) omits it.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { CONTENT_SECURITY_POLICY } from './shared/csp.ts';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

function contentSecurityPolicy(): Plugin {
  return {
    name: 'backfill-runbook:csp',
    apply: 'build',
    transformIndexHtml: (html) =>
      html.replace('<!--content-security-policy-->', `<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}" />`),
  };
}

export default defineConfig({
  root: here('./renderer'),
  base: './',
  plugins: [react(), contentSecurityPolicy()],
  build: {
    outDir: here('./.vite/renderer/main_window'),
    emptyOutDir: true,
    target: 'chrome130',
    sourcemap: false,
    // No inlined assets: everything is a file app:// serves, which the CSP allows as 'self'.
    assetsInlineLimit: 0,
    // The app loads from local files (app:// or browser mode on 127.0.0.1), never over a
    // network: one ~1.3 MB bundle (React, ECharts, React Flow) costs nothing a split would save,
    // so Vite's "chunks larger than 500 kB" advice is only noise at every npm start.
    chunkSizeWarningLimit: 2048,
  },
});
