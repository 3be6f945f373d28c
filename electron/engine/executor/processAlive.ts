import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Whether a process of this machine still runs. **Hazard**: a process that was killed but not
 * yet reaped by its parent is a zombie — its pid exists and `kill(pid, 0)` succeeds — yet it
 * will never do anything again. Where /proc tells the state (Linux), Z (zombie) and X (dead)
 * count as gone; a stopped process (SIGSTOP, T) still exists and may continue.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false; // EPERM: alive, another user's
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true; // no /proc (macOS), or it just went: the signal check above is all there is
  }
  // "pid (comm) S …": comm may hold spaces and parentheses, the state follows the last ')'.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X' && state !== 'x';
}

export interface LeaseHolder {
  host: string;
  pid: number;
  /** this machine's process, and it no longer runs: its lease may be taken over at once */
  gone: boolean;
}

/** Who holds a lease `host:pid:nonce` (the Runner's owner string). */
export function leaseHolder(owner: string): LeaseHolder {
  const parts = owner.split(':');
  const pid = Number(parts.at(-2));
  const host = parts.slice(0, -2).join(':');
  const local = host === hostname() && Number.isInteger(pid);
  return { host, pid, gone: local && pid !== process.pid && !processAlive(pid) };
}
