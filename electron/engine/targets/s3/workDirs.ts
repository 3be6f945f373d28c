/**
 * The private folders of S3 work in the system's temporary folder: a lake partition's staged
 * source objects, its objects before upload and DuckDB's spill files (`lake`), or the objects a
 * streamed export spools before upload (`s3`). The process that makes one removes it when the
 * partition settles; a process killed outright (SIGKILL, the machine restarting under it) cannot,
 * and a staged partition can be gigabytes.
 *
 * So each folder is named for the machine and the process that made it,
 * `bfr-<kind>-<host>-<pid>-XXXXXX`, and the first folder a process makes sweeps away those of
 * this machine's processes that no longer run (processAlive: a zombie counts as gone). A folder
 * of a process that still runs, of another machine sharing the folder, or of any other name is
 * left alone. Folders named before the pid was (`bfr-lake-XXXXXX`, `bfr-s3-XXXXXX`) go once a
 * day old: no partition runs that long without its folder changing.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../../executor/processAlive.ts';

export type WorkDirKind = 'lake' | 's3';
const KINDS: readonly WorkDirKind[] = ['lake', 's3'];
const LEGACY_AGE_MS = 24 * 60 * 60 * 1000;
const swept = new Set<string>();

/** This machine's name as it stands in a folder name: letters, digits, dots and underscores. */
export function hostTag(): string {
  return (
    hostname()
      .replace(/[^A-Za-z0-9.]/g, '_')
      .slice(0, 64) || 'host'
  );
}

/** A new private folder for one partition's work (the caller removes it). */
export function makeWorkDir(kind: WorkDirKind, root = tmpdir()): string {
  if (!swept.has(root)) {
    swept.add(root);
    try {
      sweepWorkDirs(root);
    } catch {
      // a folder that cannot be listed or removed now is tried again by the next process
    }
  }
  return mkdtempSync(join(root, `bfr-${kind}-${hostTag()}-${process.pid}-`));
}

/** Removes the work folders under `root` left by this machine's processes that no longer run; returns them. */
export function sweepWorkDirs(root = tmpdir(), now = Date.now()): string[] {
  const host = hostTag();
  const removed: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const name = entry.name;
    const kind = KINDS.find((k) => name.startsWith(`bfr-${k}-`));
    if (kind === undefined || !entry.isDirectory()) continue;
    const path = join(root, name);
    if (!isStale(name.slice(`bfr-${kind}-`.length), path, host, now)) continue;
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}

function isStale(rest: string, path: string, host: string, now: number): boolean {
  // <host>-<pid>-XXXXXX (hostTag leaves no dash in the host)
  const named = /^([A-Za-z0-9._]+)-(\d+)-[A-Za-z0-9]{6}$/.exec(rest);
  if (named) return named[1] === host && Number(named[2]) !== process.pid && !processAlive(Number(named[2]));
  if (!/^[A-Za-z0-9]{6}$/.test(rest)) return false;
  try {
    return now - statSync(path).mtimeMs > LEGACY_AGE_MS;
  } catch {
    return false;
  }
}
