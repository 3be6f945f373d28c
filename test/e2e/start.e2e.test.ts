/**
 * `npm start` as a newcomer runs it: where Electron's binary is missing it serves browser mode
 * (the product's own server, built from a fresh tree), prints an address, and Chromium reaches
 * the app's page through that address — from this clone, and from a clone inside a folder of
 * mode 0700, where (as root) the `postgres` user that runs the embedded PostgreSQL cannot enter
 * the clone's node_modules. The test suite's own PostgreSQL starts from that clone too. Quitting
 * leaves no server behind.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { removeSandbox } from '../../electron/engine/sandbox/index.ts';
import { sandboxServerProcesses } from '../support/sandboxProcesses.ts';
import { chromiumOrSkip, launch, ROOT, shot } from './support.ts';

const chromium = chromiumOrSkip();
const ADDRESS = /http:\/\/127\.0\.0\.1:\d+\/__runbook\/enter\?token=[\w-]+/;

interface Started {
  address: string;
  output: () => string;
  stop: () => Promise<number | null>;
}

/** `npm start` in `cwd` with its own home (its own ledger and Sandbox), as a process group of its own. */
async function npmStart(cwd: string, home: string, env: NodeJS.ProcessEnv = {}): Promise<Started> {
  // Where Electron is installed, plain `npm start` opens the desktop app, which no test can drive.
  const desktop = existsSync(join(cwd, 'node_modules', 'electron', 'path.txt'));
  const child = spawn('npm', ['start', ...(desktop ? ['--', '--browser'] : [])], {
    cwd,
    env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start printed no address within 240 s:\n${output}`)), 240_000);
    const look = (): void => {
      const found = ADDRESS.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve(found[0]);
      }
    };
    child.stdout.on('data', look);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}) before printing its address:\n${output}`));
    });
  });
  return {
    address,
    output: () => output,
    stop: async () => {
      // npm, the start script, browser mode and the Sandbox's servers: one process group.
      const group = -(child.pid ?? 0);
      process.kill(group, 'SIGTERM');
      const code = await exited;
      // npm may exit before what it started has shut down: wait for the whole group (at most 60 s).
      for (let i = 0; i < 600 && groupAlive(group); i++) await new Promise((r) => setTimeout(r, 100));
      return code;
    },
  };
}

function groupAlive(group: number): boolean {
  try {
    process.kill(group, 0);
    return true;
  } catch {
    return false;
  }
}

async function reachApp(browser: Browser, address: string, name: string): Promise<void> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(address);
  await expect
    .poll(() => page.getByRole('status').textContent(), { timeout: 60_000 })
    .toBe('Sandbox — training data, nothing real is changed');
  await shot(page, name);
  expect(new URL(page.url()).searchParams.get('token')).toBeNull(); // the token moved into an HttpOnly cookie
  expect(errors).toEqual([]);
  await context.close();
}

describe.skipIf(chromium.path === null)('npm start, browser mode, reached with Chromium', () => {
  let browser: Browser;
  const homes: string[] = [];
  const home = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'bfr-start-home-'));
    homes.push(dir);
    return dir;
  };

  beforeAll(async () => {
    browser = await launch(chromium.path as string);
  });

  afterAll(async () => {
    await browser?.close();
    for (const dir of homes) {
      removeSandbox(join(dir, '.config', 'backfill-runbook', 'sandbox'));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('from this clone: the printed address opens the app; quitting leaves no server behind', async () => {
    const h = home();
    // npm test built everything already: no build under the tests that run beside.
    const app = await npmStart(ROOT, h, { BACKFILL_RUNBOOK_PREBUILT: '1' });
    try {
      expect(app.output()).toContain('BROWSER MODE');
      await reachApp(browser, app.address, 'npm-start');
    } finally {
      await app.stop();
    }
    expect(sandboxServerProcesses(join(h, '.config', 'backfill-runbook', 'sandbox'))).toEqual([]);
  });

  describe('from a clone inside a folder of mode 0700', () => {
    let closed: string;
    let clone: string;

    beforeAll(() => {
      closed = mkdtempSync(join(tmpdir(), 'bfr-closed-'));
      chmodSync(closed, 0o700);
      clone = join(closed, 'backfill-runbook');
      execFileSync('git', ['clone', '--quiet', ROOT, clone]);
      // Its install: the same packages, hardlinked where the file system allows (npm ci would fetch them again).
      const linked = spawnSync('cp', ['-al', join(ROOT, 'node_modules'), join(clone, 'node_modules')]);
      if (linked.status !== 0) execFileSync('cp', ['-a', join(ROOT, 'node_modules'), join(clone, 'node_modules')]);
      mkdirSync(join(clone, 'test-results'), { recursive: true });
      expect(statSync(closed).mode & 0o777).toBe(0o700);
    }, 300_000);

    afterAll(() => {
      if (closed) rmSync(closed, { recursive: true, force: true });
    });

    it('npm start builds what it needs, starts the Sandbox and serves the app', async () => {
      const h = home();
      const app = await npmStart(clone, h);
      try {
        expect(app.output()).not.toMatch(/EACCES|Error:|at .+:\d+:\d+\)/);
        await reachApp(browser, app.address, 'npm-start-0700');
      } finally {
        await app.stop();
      }
      expect(sandboxServerProcesses(join(h, '.config', 'backfill-runbook', 'sandbox'))).toEqual([]);
    });

    it("the test suite's own PostgreSQL starts there too", () => {
      const r = spawnSync(
        process.execPath,
        ['node_modules/vitest/vitest.mjs', 'run', '--project', 'integration', 'test/integration/cli-errors.test.ts'],
        {
          cwd: clone,
          env: { PATH: process.env.PATH, HOME: home(), CI: process.env.CI ?? '', NO_COLOR: '1' },
          encoding: 'utf8',
          timeout: 300_000,
        },
      );
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/Tests\s+\S*\d+ passed/);
    });
  });
});
