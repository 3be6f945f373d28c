/**
 * Electron main's security, without Electron: the window's options, the CSP, the app://
 * traversal guard (hostile URLs, table-driven as in Actual Budget's trusted-url tests), the
 * trusted-sender check, navigation/window/webview/permission denial and the secret backends.
 */
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../shared/csp.ts';
import { appResponseHeaders, resolveAppPath } from '../../electron/main/appProtocol.ts';
import { safeStorageBox } from '../../electron/main/secrets.ts';
import { hardenSession, hardenWebContents } from '../../electron/main/security.ts';
import { createTrustedSenders, isAppUrl } from '../../electron/main/trustedSender.ts';
import { mainWebPreferences, mainWindowOptions } from '../../electron/main/windowOptions.ts';
import { buildBridge } from '../../electron/preload/bridge.ts';
import { CALL_NAMES } from '../../shared/contract.ts';

describe('the window', () => {
  it('isolates the page: context isolation, sandbox, no Node, no webview', () => {
    expect(mainWebPreferences('/app/.vite/build/preload.cjs')).toEqual({
      preload: '/app/.vite/build/preload.cjs',
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
    });
    const options = mainWindowOptions('/p.cjs');
    expect(options.webPreferences).toEqual(mainWebPreferences('/p.cjs'));
    expect(options.show).toBe(false); // shown once painted, never as a blank white window
  });

  it('has a strict Content-Security-Policy', () => {
    expect(CONTENT_SECURITY_POLICY).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-src 'none'; object-src 'none'",
    );
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
    expect(appResponseHeaders('/r/index.html')).toEqual({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
  });
});

describe('the app:// protocol serves only files inside the renderer folder', () => {
  const root = '/opt/app/.vite/renderer/main_window';
  it.each<[string, string | null]>([
    ['app://runbook/', join(root, 'index.html')],
    ['app://runbook/index.html', join(root, 'index.html')],
    ['app://runbook/assets/index-abc.js', join(root, 'assets/index-abc.js')],
    ['app://runbook/assets/index-abc.js?v=1#x', join(root, 'assets/index-abc.js')],
    // the URL parser already folds these back inside the root
    ['app://runbook/../../../etc/passwd', join(root, 'etc/passwd')],
    ['app://runbook/%2e%2e/%2e%2e/etc/passwd', join(root, 'etc/passwd')],
    ['app://runbook//etc/passwd', join(root, 'etc/passwd')],
    // escapes that survive parsing are refused
    ['app://runbook/..%2f..%2f..%2fetc%2fpasswd', null],
    ['app://runbook/assets/..%2F..%2F..%2F..%2Fhome%2Fme%2F.ssh%2Fid_rsa', null],
    ['app://runbook/%2e%2e%2f%2e%2e%2fetc%2fpasswd', null],
    ['app://runbook/%252e%252e%252fetc%252fpasswd', null],
    ['app://runbook/..%5c..%5cwindows%5cwin.ini', null],
    ['app://runbook/assets\\..\\..\\secret', null],
    ['app://runbook/index.html%00.png', null],
    ['app://runbook/%E0%A4%A', null],
    ['app://runbook/..', join(root, 'index.html')],
    ['app://runbook/%2e%2e', join(root, 'index.html')],
    // not ours
    ['app://evil/index.html', null],
    ['app://runbook.evil.com/index.html', null],
    ['app://user:pw@runbook/index.html', null],
    ['file:///etc/passwd', null],
    ['https://runbook/index.html', null],
    ['not a url', null],
  ])('%s → %s', (url, expected) => {
    expect(resolveAppPath(root, url)).toBe(expected);
  });
});

describe('trusted senders', () => {
  it.each<[string, boolean]>([
    ['app://runbook/index.html', true],
    ['app://runbook/index.html#/history', true],
    ['app://evil/index.html', false],
    ['app://runbook.evil/index.html', false],
    ['app://x:y@runbook/index.html', false],
    ['https://runbook/index.html', false],
    ['file:///opt/app/index.html', false],
    ['http://localhost:5173/', false],
    ['about:blank', false],
    ['', false],
  ])('isAppUrl(%s) = %s', (url, expected) => {
    expect(isAppUrl(url)).toBe(expected);
  });

  it('the Vite dev server counts only when main was started with it', () => {
    expect(isAppUrl('http://localhost:5173/index.html', 'http://localhost:5173')).toBe(true);
    expect(isAppUrl('http://localhost:5174/index.html', 'http://localhost:5173')).toBe(false);
  });

  it('trusts a message only from a webContents we created showing our page, until it is destroyed', () => {
    const senders = createTrustedSenders();
    let destroyed: () => void = () => undefined;
    senders.add({ id: 7, once: (_e, l) => (destroyed = l) });
    expect(senders.trust({ sender: { id: 7 }, senderFrame: { url: 'app://runbook/index.html' } })).toBe(true);
    expect(senders.trust({ sender: { id: 8 }, senderFrame: { url: 'app://runbook/index.html' } })).toBe(false);
    expect(senders.trust({ sender: { id: 7 }, senderFrame: { url: 'https://evil.example/' } })).toBe(false);
    expect(senders.trust({ sender: { id: 7 }, senderFrame: null })).toBe(false);
    destroyed();
    expect(senders.trust({ sender: { id: 7 }, senderFrame: { url: 'app://runbook/index.html' } })).toBe(false);
  });
});

describe('navigation, new windows, webviews and permissions are denied', () => {
  type Listener = (event: { preventDefault(): void }, url?: string) => void;
  function fakeContents() {
    const listeners = new Map<string, Listener>();
    let openHandler: (() => { action: string }) | undefined;
    const contents = {
      on: (name: string, l: Listener) => listeners.set(name, l),
      setWindowOpenHandler: (h: () => { action: string }) => (openHandler = h),
    };
    hardenWebContents(contents as never);
    const fire = (name: string, url?: string) => {
      const preventDefault = vi.fn();
      listeners.get(name)?.({ preventDefault }, url);
      return preventDefault.mock.calls.length > 0;
    };
    return { fire, open: () => openHandler?.() };
  }

  it.each<[string, string, boolean]>([
    ['will-navigate', 'https://evil.example/phish', true],
    ['will-navigate', 'file:///etc/passwd', true],
    ['will-navigate', 'app://evil/index.html', true],
    ['will-navigate', 'app://runbook/index.html', false],
    ['will-redirect', 'https://evil.example/', true],
    ['will-attach-webview', 'https://anything/', true],
  ])('%s to %s: prevented %s', (event, url, prevented) => {
    expect(fakeContents().fire(event, url)).toBe(prevented);
  });

  it('new windows are denied', () => {
    expect(fakeContents().open()).toEqual({ action: 'deny' });
  });

  it('every permission request and check says no', () => {
    const handlers: Record<string, (...args: unknown[]) => unknown> = {};
    hardenSession({
      setPermissionRequestHandler: (h: never) => (handlers.request = h),
      setPermissionCheckHandler: (h: never) => (handlers.check = h),
      setDevicePermissionHandler: (h: never) => (handlers.device = h),
    });
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal']) {
      const callback = vi.fn();
      handlers.request?.({}, permission, callback);
      expect(callback).toHaveBeenCalledWith(false);
      expect(handlers.check?.({}, permission)).toBe(false);
    }
    expect(handlers.device?.({})).toBe(false);
  });
});

describe('secrets at rest (safeStorage)', () => {
  const storage = (available: boolean, backend?: string) => ({
    isEncryptionAvailable: () => available,
    encryptString: (s: string) => Buffer.from(`enc:${s}`),
    decryptString: (b: Buffer) => b.toString().slice(4),
    getSelectedStorageBackend: backend === undefined ? undefined : () => backend,
  });
  it.each<[string, boolean, string | undefined, NodeJS.Platform, string]>([
    ['macOS Keychain', true, undefined, 'darwin', 'os'],
    ['Windows DPAPI', true, undefined, 'win32', 'os'],
    ['Linux with libsecret', true, 'gnome_libsecret', 'linux', 'os'],
    ['Linux with kwallet', true, 'kwallet5', 'linux', 'os'],
    ['Linux with no keychain: plain text', true, 'basic_text', 'linux', 'plain-text'],
    ['Linux, backend unknown: treated as plain text', true, 'unknown', 'linux', 'plain-text'],
    ['no encryption at all', false, undefined, 'linux', 'unavailable'],
  ])('%s → %s', (_name, available, backend, platform, expected) => {
    const box = safeStorageBox(storage(available, backend), platform);
    expect(box.backend).toBe(expected);
    expect(box.decrypt(box.encrypt('hunter2'))).toBe('hunter2');
  });
});

describe('window.runbook', () => {
  it('has one function per contract call, grouped by domain, and no generic invoke', async () => {
    const sent: [string, unknown][] = [];
    const bridge = buildBridge({
      invoke: (c, i) => (sent.push([c, i]), Promise.resolve({ ok: true, value: null })),
      subscribe: () => () => undefined,
    });
    const functions = Object.entries(bridge).flatMap(([domain, group]) =>
      typeof group === 'function' ? [domain] : Object.keys(group as object).map((v) => `${domain}:${v}`),
    );
    expect(functions.sort()).toEqual([...CALL_NAMES, 'on'].sort());
    expect('invoke' in bridge).toBe(false);
    await bridge.history.list({ search: 'bf' });
    await bridge.app.info({});
    expect(sent).toEqual([
      ['history:list', { search: 'bf' }],
      ['app:info', {}],
    ]);
    expect(Object.isFrozen(bridge)).toBe(true);
  });

  it('listens to contract events only', () => {
    const bridge = buildBridge({ invoke: () => Promise.resolve(null), subscribe: () => () => undefined });
    expect(() => bridge.on('ipc:anything' as never, () => undefined)).toThrow(
      'unknown event ipc:anything: the contract lists run:progress',
    );
    expect(typeof bridge.on('run:progress', () => undefined)).toBe('function');
  });
});
