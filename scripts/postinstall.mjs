// After `npm install`: is the desktop app installed? electron is an optional dependency because
// its install script downloads the Electron binary from GitHub, and where GitHub cannot be
// reached npm drops the package rather than fail the whole install. Then this says so in one
// line (npm start uses browser mode) and puts Electron's type declarations where tsconfig.json
// looks for them second, so the type check of electron/main and electron/preload still runs.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const electronDir = join(root, 'node_modules', 'electron');
/** Where tsconfig.json's `paths` falls back to (inside node_modules: git-ignored, renewed by every install). */
const FALLBACK_TYPES = join(root, 'node_modules', '.cache', 'backfill-runbook', 'electron.d.ts');

/** The binary is there when the electron package recorded where it unpacked it (its own install check). */
function binaryInstalled() {
  try {
    const relative = readFileSync(join(electronDir, 'path.txt'), 'utf8');
    return existsSync(join(electronDir, 'dist', relative));
  } catch {
    return false;
  }
}

function lockedElectronVersion() {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  return lock.packages?.['node_modules/electron']?.version;
}

/** `npm pack` fetches the same tarball npm just tried (from its cache); only electron.d.ts is kept. */
function fetchTypes(version) {
  const work = mkdtempSync(join(tmpdir(), 'bfr-electron-types-'));
  try {
    const npm = process.env.npm_execpath;
    const [command, args] = npm ? [process.execPath, [npm]] : ['npm', []];
    const packed = execFileSync(command, [...args, 'pack', `electron@${version}`, '--pack-destination', work, '--silent'], {
      cwd: work,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
      .trim()
      .split('\n')
      .at(-1);
    execFileSync('tar', ['-xzf', join(work, packed), '-C', work, 'package/electron.d.ts'], { stdio: 'ignore' });
    mkdirSync(join(FALLBACK_TYPES, '..'), { recursive: true });
    renameSync(join(work, 'package', 'electron.d.ts'), FALLBACK_TYPES);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message.split('\n')[0] : String(err);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (!binaryInstalled()) {
  console.log("desktop app skipped: Electron's binary could not be downloaded; npm start will use browser mode");
  if (!existsSync(join(electronDir, 'electron.d.ts')) && !existsSync(FALLBACK_TYPES)) {
    const version = lockedElectronVersion();
    const problem = version ? fetchTypes(version) : 'package-lock.json names no electron version';
    if (problem) console.log(`  (Electron's type declarations could not be fetched either, so npm run typecheck will fail: ${problem})`);
  }
}
