// Builds the desktop app with Vite, the same configs Electron Forge uses: main, preload and the
// renderer into .vite/ (`node scripts/build-app.mjs [main] [preload] [renderer]`, default all).
// CI runs it because Electron itself cannot start on the build machines: the builds and the
// type check are how main and preload are proven there.
import { build } from 'vite';

const all = ['main', 'preload', 'renderer'];
const wanted = process.argv.slice(2);
const unknown = wanted.filter((t) => !all.includes(t));
if (unknown.length > 0) {
  console.error(`unknown target(s): ${unknown.join(', ')} (known: ${all.join(', ')})`);
  process.exit(2);
}
// What Forge's Vite plugin defines for main; a built app has no dev server.
const define = { MAIN_WINDOW_VITE_DEV_SERVER_URL: 'undefined', MAIN_WINDOW_VITE_NAME: JSON.stringify('main_window') };

for (const target of wanted.length > 0 ? wanted : all) {
  const started = Date.now();
  await build({ configFile: `vite.${target}.config.ts`, mode: 'production', logLevel: 'warn', ...(target === 'main' ? { define } : {}) });
  console.log(`built ${target} in ${Date.now() - started} ms`);
}
