/**
 * `npm start` with nothing configured: the app opens on a fresh Sandbox (browser mode here,
 * where Electron's binary is missing), answers on its address, and when it quits it leaves no
 * PostgreSQL or S3 server process behind.
 */
import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { removeSandbox } from '../../electron/engine/sandbox/index.ts';
import { sandboxServerProcesses } from '../support/sandboxProcesses.ts';

const root = resolve(import.meta.dirname, '../..');

describe('npm start', () => {
  it('opens on a fresh sandbox and leaves no process behind when it quits', async () => {
    const home = mkdtempSync(join(tmpdir(), 'bfr-start-'));
    const started = Date.now();
    const child = spawn(process.execPath, ['scripts/start.mjs', '--browser'], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: home, BACKFILL_RUNBOOK_DB: join(home, 'runbook.sqlite'), BACKFILL_RUNBOOK_PREBUILT: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const url = await new Promise<string>((resolveUrl, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        output += d.toString();
        const found = /http:\/\/127\.0\.0\.1:\d+\/__runbook\/enter\?token=[\w-]+/.exec(output);
        if (found) resolveUrl(found[0]);
      });
      child.on('exit', () => reject(new Error(`npm start exited before printing its address:\n${output}`)));
    });
    const readyMs = Date.now() - started;
    expect(output).toContain('Sandbox workspace');
    const servers = sandboxServerProcesses(join(home, 'sandbox'));
    expect(servers.filter((p) => p.includes('s3rverProcess'))).toHaveLength(1);
    expect(servers.length).toBeGreaterThan(1);
    const page = await fetch(url, { redirect: 'manual' });
    expect([200, 302, 303]).toContain(page.status);
    // Without the token the app refuses.
    const denied = await fetch(url.replace(/token=[\w-]+/, 'token=wrong'), { redirect: 'manual' });
    expect(denied.status).toBeGreaterThanOrEqual(400);

    // The command line meets the app's sandbox: it uses it, and does not stop what it did not start.
    const cli = (...args: string[]) => {
      const r = spawnSync(process.execPath, ['bin/run-backfill.mjs', 'sandbox', ...args, '--dir', join(home, 'sandbox')], {
        cwd: root,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: home },
      });
      return { code: r.status, out: r.stdout + r.stderr };
    };
    expect(cli('status').out).toMatch(/^Sandbox running, started by another process \(the app\?; its PostgreSQL has pid \d+\)/);
    const up = cli('up');
    expect(up.code).toBe(0);
    expect(up.out).toContain('[Sandbox] already running, started by another process');
    const load = cli('load', '2');
    expect(load.code, load.out).toBe(0);
    expect(cli('check', '2').out).toContain('Scenario 2: An upstream schema change mis-aggregated 72 hours — not fixed yet');
    const down = cli('down');
    expect(down.code).toBe(1);
    expect(down.out).toMatch(
      /was started by another process \(the app\?; its PostgreSQL has pid \d+\), not by sandbox up: quit it there\./,
    );
    expect(sandboxServerProcesses(join(home, 'sandbox')).length).toBeGreaterThan(1);

    const quitting = Date.now();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    const quitMs = Date.now() - quitting;
    expect(sandboxServerProcesses(join(home, 'sandbox'))).toEqual([]);
    console.info(
      `npm start: sandbox app ready in ${readyMs} ms (renderer prebuilt); quit in ${quitMs} ms with no PostgreSQL or S3 server left`,
    );
    removeSandbox(join(home, 'sandbox')); // as root its PostgreSQL data lives in /var/tmp
    rmSync(home, { recursive: true, force: true });
  }, 180_000);
});
