/**
 * The private folders of S3 work in the system's temporary folder: a lake partition's staged
 * source objects, its objects before upload and DuckDB's spill files (`lake`), or what
 * writeObjects spools when its caller gives it no folder (`s3`). The process that makes one
 * removes it when the partition settles; a process killed outright (SIGKILL, the machine
 * restarting under it) cannot, and a staged partition can be gigabytes.
 *
 * So each folder is named for the process that made it, `bfr-<kind>-<machine>-<pid>-XXXXXX`,
 * where the machine is the host name and the pid namespace (two containers may share /tmp and
 * a host name, never a pid namespace and its pids). Making a folder starts a sweep in the
 * background — at most once an hour per process, so a long-lived app sweeps too — that removes
 * the folders of this machine's processes that no longer run (processAlive: a zombie counts as
 * gone) and that belong to this user. A folder of a process that still runs, of another machine
 * or user, or of any other name is left alone. Folders named before the process was
 * (`bfr-lake-XXXXXX`, `bfr-s3-XXXXXX`: no machine in the name) go once a day old, whoever
 * made them: no partition runs that long without its folder changing.
 */
import { mkdtempSync, readlinkSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../../executor/processAlive.ts';

export type WorkDirKind = 'lake' | 's3';
const KINDS: readonly WorkDirKind[] = ['lake', 's3'];
const LEGACY_AGE_MS = 24 * 60 * 60 * 1000;
const SWEEP_EVERY_MS = 60 * 60 * 1000;
const lastSweep = new Map<string, number>();
let machine: string | undefined;

/** This machine as it stands in a folder name: host and pid namespace, in letters, digits, dots and underscores. */
export function machineTag(): string {
  machine ??= readMachineTag();
  return machine;
}

function readMachineTag(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9.]/g, '_')
      .slice(0, 64) || 'host';
  let ns = '';
  try {
    ns = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '';
  } catch {
    // no /proc (macOS, Windows): the host name alone
  }
  return ns ? `${host}.${ns}` : host;
}

/** A new private folder for one partition's work (the caller removes it); sweeps leftovers in the background. */
export function makeWorkDir(kind: WorkDirKind, root = tmpdir()): string {
  const now = Date.now();
  if (now - (lastSweep.get(root) ?? -Infinity) >= SWEEP_EVERY_MS) {
    lastSweep.set(root, now);
    // a folder that cannot be removed now is tried again by the next sweep
    sweepWorkDirs(root).catch(() => undefined);
  }
  return mkdtempSync(join(root, `bfr-${kind}-${machineTag()}-${process.pid}-`));
}

/**
 * Removes the work folders under `root` that this user's processes of this machine left and no
 * longer use; returns them. One that cannot be read or removed is skipped.
 */
export async function sweepWorkDirs(root = tmpdir(), now = Date.now()): Promise<string[]> {
  const uid = process.getuid?.();
  const removed: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const kind = KINDS.find((k) => entry.name.startsWith(`bfr-${k}-`));
    if (kind === undefined || !entry.isDirectory()) continue;
    const path = join(root, entry.name);
    try {
      const s = await stat(path);
      if (uid !== undefined && s.uid !== uid) continue;
      if (!isStale(entry.name.slice(`bfr-${kind}-`.length), s.mtimeMs, now)) continue;
      await rm(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // gone meanwhile, or not ours to remove: the rest are still swept
    }
  }
  return removed;
}

function isStale(rest: string, mtimeMs: number, now: number): boolean {
  // <machine>-<pid>-XXXXXX (machineTag leaves no dash in the machine); this process is alive too
  const named = /^([A-Za-z0-9._]+)-(\d+)-[A-Za-z0-9]{6}$/.exec(rest);
  if (named) return named[1] === machineTag() && !processAlive(Number(named[2]));
  return /^[A-Za-z0-9]{6}$/.test(rest) && now - mtimeMs > LEGACY_AGE_MS;
}
