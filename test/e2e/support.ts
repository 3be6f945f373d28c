/**
 * What the end-to-end tests need around browser mode: a Chromium (Debian's, driven by
 * playwright-core — never a downloaded one), the product's browser-mode server as a process of
 * its own (so a test can kill it mid-run and start it again), pages wired to it, and
 * screenshots CI keeps.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const ROOT = resolve(import.meta.dirname, '../..');
export const RENDERER = join(ROOT, '.vite/renderer/main_window');
/** Browser mode as built by scripts/build-node.mjs (npm test builds it first). */
export const BROWSER_MODE = join(ROOT, 'dist/node/browser-mode.mjs');
export const SHOTS = join(ROOT, 'test-results/e2e');

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

/** Where Chromium is, or why the e2e tests cannot run here. Under CI a missing browser is an error. */
export function chromiumOrSkip(): { path: string | null; reason: string | null } {
  // An explicit CHROMIUM_PATH is the only place looked at: a wrong one is not silently replaced.
  const looked = process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : CANDIDATES;
  const path = looked.find((p) => existsSync(p)) ?? null;
  if (path) return { path, reason: null };
  const reason = `no Chromium found (looked at ${looked.join(', ')}); install it with \`apt-get install chromium\` or set CHROMIUM_PATH`;
  if (process.env.CI) throw new Error(`[e2e] CI=true and ${reason}: the end-to-end tests must run in CI`);
  console.warn(`\n[e2e] SKIPPED — the end-to-end tests did not run: ${reason}.\n`);
  return { path: null, reason };
}

export function launch(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export interface Engine {
  origin: string;
  token: string;
  child: ChildProcess;
  /** SIGKILL: the engine dies mid-whatever, as in a crash or a power cut */
  kill: () => Promise<void>;
  /** SIGTERM: executors stop at their partition boundary */
  stop: () => Promise<void>;
}

let engines = 0;

export type EngineOptions =
  /** a folder workspace (backfill.config.yaml, jobs/) with its ledger */
  | { workspace: string; db: string; env: NodeJS.ProcessEnv }
  /** the Sandbox in this folder, started (or made, when empty) as `npm start` does; `db` is the app's own ledger for folder switches */
  | { sandbox: string; db: string; env?: NodeJS.ProcessEnv };

/** Starts browser mode (electron/browser/main.ts, built) as its own process on a folder workspace or a Sandbox. */
export async function startEngine(opts: EngineOptions): Promise<Engine> {
  mkdirSync(SHOTS, { recursive: true });
  const log = createWriteStream(join(SHOTS, `engine-${++engines}.log`));
  const where = 'sandbox' in opts ? ['--sandbox', opts.sandbox] : ['--workspace', opts.workspace];
  const child = spawn(process.execPath, [BROWSER_MODE, ...where, '--db', opts.db, '--renderer', RENDERER, '--ready-json'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.pipe(log);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ready = await new Promise<{ origin: string; token: string }>((resolveReady, reject) => {
    // A fresh Sandbox runs initdb and seeds its warehouse first: give it longer.
    const limitS = 'sandbox' in opts ? 180 : 60;
    const timer = setTimeout(() => {
      child.kill('SIGTERM'); // not left behind (with a Sandbox's PostgreSQL) when it never got ready
      reject(new Error(`the engine did not start within ${limitS} s; see test-results/e2e/engine-*.log`));
    }, limitS * 1000);
    child.once('exit', (code) =>
      reject(new Error(`the engine exited with ${code} before it was ready; see test-results/e2e/engine-*.log`)),
    );
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) => {
      clearTimeout(timer);
      resolveReady(JSON.parse(line) as { origin: string; token: string });
    });
  });
  return {
    ...ready,
    child,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A page on the engine's app with its token cookie, as opening the printed address gives (the server serves the bridge). */
export async function openApp(browser: Browser, engine: Engine): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
  await context.addCookies([{ name: 'runbook_token', value: engine.token, url: engine.origin }]);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes('favicon')) errors.push(m.text());
  });
  return { context, page, errors };
}

/** Chromium, browser mode on a folder workspace, and a page on its app: what each workspace e2e test opens first. */
export async function openWorkspaceApp(
  executablePath: string,
  ws: { dir: string; db: string; env: NodeJS.ProcessEnv },
): Promise<{ browser: Browser; engine: Engine; page: Page; errors: string[] }> {
  const browser = await launch(executablePath);
  const engine = await startEngine({ workspace: ws.dir, db: ws.db, env: ws.env });
  const { page, errors } = await openApp(browser, engine);
  return { browser, engine, page, errors };
}

/** Closes what openWorkspaceApp opened, then drops the test's databases and removes its workspace (each only if it was made). */
export async function closeWorkspaceApp(
  app: { browser?: Browser; engine?: Engine },
  databases: ({ drop: () => Promise<void> } | undefined)[],
  wsDir: string | undefined,
): Promise<void> {
  await app.browser?.close();
  await app.engine?.stop();
  for (const db of databases) await db?.drop();
  if (wsDir) rmSync(wsDir, { recursive: true, force: true });
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Opens step `n` of the runbook from the step list ("3. Impact scope"). */
export async function openStep(page: Page, n: number, title: string): Promise<void> {
  await page.getByRole('button', { name: new RegExp(`^\\D*${n}\\. ${title}`) }).click();
}

/** The DOM of a scrolling element, as far as these helpers use it (the tests' tsconfig has no DOM types). */
export interface Scroller {
  scrollTop: number;
  clientHeight: number;
  scrollHeight: number;
}

/**
 * Every row of a virtual table (components/VirtualTable.tsx renders only those in view), read
 * by scrolling it from top to bottom; each row's text once, in order.
 */
export async function allRows(page: Page, label: string): Promise<string[]> {
  const table = page.getByRole('table', { name: label, exact: true });
  const body = table.locator('.vtable-body');
  const rows = new Map<number, string>();
  await body.evaluate((el: Scroller) => (el.scrollTop = 0));
  for (let i = 0; i < 1000; i++) {
    for (const row of await table.locator('[role="row"][aria-rowindex]').all()) {
      rows.set(Number(await row.getAttribute('aria-rowindex')), (await row.textContent()) ?? '');
    }
    const atEnd = await body.evaluate((el: Scroller) => {
      const end = el.scrollTop + el.clientHeight >= el.scrollHeight - 1;
      el.scrollTop += el.clientHeight;
      return end;
    });
    if (atEnd) break;
    await page.waitForTimeout(50); // the virtualizer renders the rows now in view
  }
  return [...rows.entries()].sort(([a], [b]) => a - b).map(([, text]) => text);
}
