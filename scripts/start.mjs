// `npm start`: the desktop app through Electron Forge when Electron's binary is installed.
// Where it is not (ELECTRON_SKIP_BINARY_DOWNLOAD, a build machine, a server), it says so and
// falls back to browser mode: the same handlers and engine behind the test harness's loopback
// server, with a random per-run token, on 127.0.0.1 only; open the address it prints.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

function electronBinary() {
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
      : `Electron's binary is not installed here (${electron.why}).`,
    process.env.ELECTRON_SKIP_BINARY_DOWNLOAD
      ? 'ELECTRON_SKIP_BINARY_DOWNLOAD is set, so `npm install` skipped it; unset it and run `npm install` again for the desktop app.'
      : 'Run `npm install` with network access to GitHub to get the desktop app.',
    'Starting Backfill Runbook in BROWSER MODE instead: the same screens, handlers and engine, served on 127.0.0.1.',
    '',
  ].join('\n'),
);
// BACKFILL_RUNBOOK_PREBUILT=1: the renderer is already built (npm test builds it first); a
// rebuild would empty .vite/renderer under the e2e tests that run beside.
if (!process.env.BACKFILL_RUNBOOK_PREBUILT) {
  const built = await run(process.execPath, ['scripts/build-app.mjs', 'renderer']);
  if (built !== 0) process.exit(built);
}
const args = ['--import', 'tsx', 'test/e2e/harness/main.ts', '--browser'];
if (process.env.BACKFILL_RUNBOOK_WORKSPACE) args.push('--workspace', process.env.BACKFILL_RUNBOOK_WORKSPACE);
process.exit(await run(process.execPath, args));
