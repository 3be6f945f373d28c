/**
 * The one window's options. Kept apart from the code that creates it so a test can assert
 * every security switch without starting Electron.
 */
import type { BrowserWindowConstructorOptions, WebPreferences } from 'electron';

export function mainWebPreferences(preload: string): WebPreferences {
  return {
    preload,
    // **Important**: these four are the security boundary. The page gets window.runbook
    // from the preload and nothing else: no Node, no Electron, no require.
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webviewTag: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    navigateOnDragDrop: false,
    safeDialogs: true,
    spellcheck: false,
  };
}

export function mainWindowOptions(preload: string): BrowserWindowConstructorOptions {
  return {
    title: 'Backfill Runbook',
    width: 1320,
    height: 880,
    minWidth: 980,
    minHeight: 640,
    show: false,
    backgroundColor: '#f5f6f8',
    autoHideMenuBar: true,
    webPreferences: mainWebPreferences(preload),
  };
}
