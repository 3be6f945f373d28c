/**
 * Who holds a run's lease, and whether it still runs: a pid that exists is not proof — a
 * killed process its parent has not reaped (a zombie) counts as gone; another host's process
 * is never judged from here.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { leaseHolder, processAlive } from '../../electron/engine/executor/processAlive.ts';

describe('processAlive', () => {
  it('is true for a running process, false for one that exited', () => {
    expect(processAlive(process.pid)).toBe(true);
    const done = spawnSync(process.execPath, ['-e', '0']);
    expect(processAlive(done.pid ?? -1)).toBe(false);
    expect(processAlive(0)).toBe(false);
  });

  // Only Linux's /proc tells a zombie from a live process (elsewhere the pid check is all there is).
  it.runIf(existsSync('/proc/self/stat'))('is false for a zombie: killed, not yet reaped by its parent', async () => {
    // The shell execs into sleep, which never reaps the child it inherits.
    const parent = spawn('/bin/sh', ['-c', 'sleep 30 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(await new Promise<string>((r) => parent.stdout.once('data', (d: Buffer) => r(d.toString().trim()))));
      expect(processAlive(pid)).toBe(true);
      process.kill(pid, 'SIGKILL');
      let alive = true;
      for (let i = 0; i < 50 && alive; i++) {
        alive = processAlive(pid);
        if (alive) await new Promise((r) => setTimeout(r, 20));
      }
      expect(alive).toBe(false);
      expect(() => process.kill(pid, 0)).not.toThrow(); // the pid still exists
    } finally {
      parent.kill('SIGKILL');
    }
  });
});

describe('leaseHolder', () => {
  it('reads host and pid from the owner string, and never calls another host gone', () => {
    expect(leaseHolder('db-runner-7:4242:1a2b3c4d')).toEqual({ host: 'db-runner-7', pid: 4242, gone: false });
    const done = spawnSync(process.execPath, ['-e', '0']);
    expect(leaseHolder(`${hostname()}:${done.pid}:1a2b3c4d`)).toMatchObject({ gone: true });
    expect(leaseHolder(`${hostname()}:${process.pid}:1a2b3c4d`)).toMatchObject({ gone: false });
  });
});
