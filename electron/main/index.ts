/**
 * Electron main: lifecycle, the one window, the app:// protocol, IPC registration and
 * safeStorage. The ONLY code of the product that imports 'electron'; everything it wires is
 * plain Node (the engine) or pure (security options, protocol guard, trusted senders).
 */
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, net, protocol, safeStorage, session } from 'electron';
import type { ProgressEvent } from '../../shared/contractTypes.ts';
import { defaultDbPath } from '../cli/paths.ts';
import { createRunbookService, type RunbookService } from '../engine/runbook/service.ts';
import { folderWorkspace, sandboxWorkspace } from '../engine/runbook/workspace.ts';
import { utilityNodeSpawner } from './nodeProcess.ts';
import { appResponseHeaders, resolveAppPath } from './appProtocol.ts';
import { registerHandlers } from './handlers/index.ts';
import { safeStorageBox } from './secrets.ts';
import { hardenSession, hardenWebContents } from './security.ts';
import { APP_ENTRY, APP_SCHEME, createTrustedSenders } from './trustedSender.ts';
import { mainWindowOptions } from './windowOptions.ts';

// Defined by Electron Forge's Vite plugin (and by scripts/build-app.mjs).
declare const MAIN_WINDOW_VITE_DEV_SERVER_URL: string | undefined;
declare const MAIN_WINDOW_VITE_NAME: string;

const devServerUrl = !app.isPackaged && typeof MAIN_WINDOW_VITE_DEV_SERVER_URL === 'string' ? MAIN_WINDOW_VITE_DEV_SERVER_URL : undefined;
const here = import.meta.dirname;
const rendererRoot = join(here, '..', 'renderer', MAIN_WINDOW_VITE_NAME);
const preload = join(here, 'preload.cjs');

// Must happen before 'ready': app:// behaves like https (secure, standard, fetch-able).
protocol.registerSchemesAsPrivileged([
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true, stream: true } },
]);
app.enableSandbox();

let window: BrowserWindow | null = null;
let service: RunbookService | null = null;
const trusted = createTrustedSenders(devServerUrl);

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    if (window?.isMinimized()) window.restore();
    window?.focus();
  });
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, devServerUrl));
  void app.whenReady().then(start).catch(fatal);
  app.on('window-all-closed', () => app.quit());
  let closing = false;
  app.on('before-quit', (event) => {
    if (closing || !service) return;
    // Executors stop at their partition boundary; the sandbox's PostgreSQL shuts down cleanly.
    closing = true;
    event.preventDefault();
    void service.close().finally(() => app.quit());
  });
}

async function start(): Promise<void> {
  hardenSession(session.defaultSession);
  protocol.handle(APP_SCHEME, async (request) => {
    const file = request.method === 'GET' ? resolveAppPath(rendererRoot, request.url) : null;
    if (!file) return new Response('not found', { status: 404 });
    const response = await net.fetch(pathToFileURL(file).toString());
    return new Response(response.body, { status: response.status, headers: appResponseHeaders(file) });
  });

  const defaultDb = defaultDbPath();
  const sandboxDir = join(dirname(defaultDb), 'sandbox');
  const workspaceDir = process.env.BACKFILL_RUNBOOK_WORKSPACE;
  service = createRunbookService({
    workspace: workspaceDir ? folderWorkspace(workspaceDir, defaultDb) : await sandboxWorkspace(sandboxDir, undefined, utilityNodeSpawner),
    openSandbox: () => sandboxWorkspace(sandboxDir, undefined, utilityNodeSpawner),
    defaultDb,
    secrets: safeStorageBox(safeStorage),
    version: app.getVersion(),
    browserMode: false,
    emit: (event: ProgressEvent) => {
      if (window && !window.isDestroyed()) window.webContents.send('run:progress', event);
    },
  });
  const engine = service;
  registerHandlers(
    ipcMain,
    {
      trust: (event) => trusted.trust(event),
      redact: (text) => engine.redact(text),
      log: (channel, err) => console.error(`[${channel}]`, err),
    },
    service,
  );

  window = new BrowserWindow(mainWindowOptions(preload));
  trusted.add(window.webContents);
  window.once('ready-to-show', () => window?.show());
  window.on('closed', () => (window = null));
  await window.loadURL(devServerUrl ?? APP_ENTRY);
}

function fatal(err: unknown): void {
  dialog.showErrorBox('Backfill Runbook could not start', err instanceof Error ? err.message : String(err));
  app.exit(1);
}
