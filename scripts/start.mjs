// `npm start`: the desktop app through Electron Forge when Electron's binary is installed.
// Where it is not (npm install could not download it, or ELECTRON_SKIP_BINARY_DOWNLOAD was set)
// it says so and starts browser mode instead: the same screens, handlers and engine, served by
// the product's own loopback server (electron/browser, built into dist/node by
// scripts/build-node.mjs) behind a random per-run token; open the address it prints.
// `npm start -- --browser` asks for browser mode where Electron is installed too.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

function electronBinary() {
  if (!existsSync(join(root, 'node_modules', 'electron', 'package.json')))
    return { why: 'npm install could not download it, and went on without it (Electron is an optional dependency)' };
  try {
    const path = require('electron'); // the electron package resolves to its binary's path
    if (typeof path === 'string' && existsSync(path)) return { path };
    return { why: `the electron package points at ${String(path)}, which does not exist` };
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    // The electron package's own words ("failed to install correctly, please delete …") point
    // at a broken install; almost always the binary was simply never downloaded.
    if (message.includes('failed to install correctly'))
      return { why: 'its binary was never downloaded: ELECTRON_SKIP_BINARY_DOWNLOAD was set, or the download failed at install' };
    return { why: message };
  }
}

function run(command, args) {
  const child = spawn(command, args, { cwd: root, stdio: 'inherit', env: process.env });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

/** The newest modification time of any file under these folders (a few hundred files: milliseconds). */
function newest(dirs) {
  let latest = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else latest = Math.max(latest, statSync(path).mtimeMs);
    }
  };
  for (const dir of dirs) walk(join(root, dir));
  return latest;
}

/** Builds what is missing or older than its sources, so a fresh clone and an edited tree both start right. */
async function ensureBuilt() {
  const stale = (output, sources) => !existsSync(join(root, output)) || statSync(join(root, output)).mtimeMs < newest(sources);
  const builds = [
    ['dist/node/browser-mode.mjs', ['electron', 'shared'], ['scripts/build-node.mjs']],
    ['.vite/renderer/main_window/index.html', ['renderer', 'shared'], ['scripts/build-app.mjs', 'renderer']],
  ];
  for (const [output, sources, args] of builds) {
    if (!stale(output, sources)) continue;
    const code = await run(process.execPath, args);
    if (code !== 0) process.exit(code);
  }
}

const electron = electronBinary();
if (electron.path && !process.argv.includes('--browser')) {
  const code = await run(process.execPath, [
    fileURLToPath(new URL('../node_modules/@electron-forge/cli/dist/electron-forge.js', import.meta.url)),
    'start',
    ...process.argv.slice(2),
  ]);
  // **Hazard**: Forge rebuilt better-sqlite3 for Electron's ABI; the CLI and the tests run in
  // plain Node, which cannot load that build. Put Node's build back.
  console.log('Restoring the Node.js build of better-sqlite3 for run-backfill and the tests…');
  await run('npm', ['rebuild', 'better-sqlite3']);
  process.exit(code);
}

console.log(
  [
    '',
    process.argv.includes('--browser')
      ? 'Browser mode was asked for (--browser).'
      : `The desktop app is not installed: Electron's binary is missing — ${electron.why}.`,
    process.env.ELECTRON_SKIP_BINARY_DOWNLOAD
      ? 'ELECTRON_SKIP_BINARY_DOWNLOAD is set, so `npm install` skipped it; unset it and run `npm install` again for the desktop app.'
      : 'Run `npm install` again where GitHub can be reached to get the desktop app.',
    'Starting Backfill Runbook in BROWSER MODE instead: the same screens, handlers and engine, served on 127.0.0.1.',
    '',
  ].join('\n'),
);
// BACKFILL_RUNBOOK_PREBUILT=1: everything is built already (npm test builds it first); a build
// would replace files under the tests that run beside.
if (!process.env.BACKFILL_RUNBOOK_PREBUILT) await ensureBuilt();
process.exit(
  await run(process.execPath, [join(root, 'dist/node/browser-mode.mjs'), ...process.argv.slice(2).filter((a) => a !== '--browser')]),
);
