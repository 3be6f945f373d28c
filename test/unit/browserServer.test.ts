/**
 * Browser mode's server is a local server that can run backfills: loopback only, its own Host
 * only, a per-run token for everything, calls from its own Origin only, request bodies capped,
 * the app:// traversal guard for files, and the contract's handlers behind it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALL_NAMES, splitCallName } from '../../shared/contract.ts';
import { CONTENT_SECURITY_POLICY } from '../../shared/csp.ts';
import type { RunbookService } from '../../electron/engine/runbook/service.ts';
import { startBrowserServer, type BrowserServer } from '../../electron/browser/server.ts';
import { MAX_BODY_BYTES } from '../../electron/browser/http.ts';

let dir: string;
let server: BrowserServer;
const BRIDGE = 'Object.defineProperty(globalThis, "runbook", { value: {} });';
const reached: string[] = [];

function fakeService(): RunbookService {
  const service: Record<string, unknown> = { redact: (t: string) => t, close: () => Promise.resolve() };
  for (const name of CALL_NAMES) {
    const [domain, verb] = splitCallName(name);
    ((service[domain] ??= {}) as Record<string, unknown>)[verb] = (args: unknown) => {
      reached.push(name);
      return { echo: args };
    };
  }
  return service as unknown as RunbookService;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; cookie?: boolean } = {},
): Promise<Reply> {
  const url = new URL(server.origin);
  const headers: Record<string, string> = {
    host: url.host,
    ...(opts.cookie === false ? {} : { cookie: `runbook_token=${server.token}` }),
    ...opts.headers,
  };
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: Number(url.port), path, method: opts.method ?? 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const callHeaders = () => ({ origin: server.origin, 'content-type': 'application/json' });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bfr-browser-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><html><head><script type="module" src="./assets/a.js"></script></head><body></body></html>',
  );
  writeFileSync(join(dir, 'assets', 'a.js'), 'console.log(1)');
  writeFileSync(join(tmpdir(), 'bfr-browser-secret.txt'), 'secret');
  server = await startBrowserServer({ createService: fakeService, rendererDir: dir, bridgeScript: BRIDGE });
}, 60_000);

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the browser-mode server', () => {
  it('listens on loopback only, with a long random token', () => {
    expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('opens a session only with the right token, as an HttpOnly SameSite=Strict cookie', async () => {
    expect((await send(`/__runbook/enter?token=${server.token.slice(1)}x`, { cookie: false })).status).toBe(403);
    const ok = await send(`/__runbook/enter?token=${server.token}`, { cookie: false });
    expect(ok.status).toBe(302);
    expect(ok.headers['set-cookie']).toEqual([`runbook_token=${server.token}; HttpOnly; SameSite=Strict; Path=/`]);
  });

  it.each<[string, string, () => Parameters<typeof send>[1], number]>([
    ['no token', '/', () => ({ cookie: false }), 403],
    ['a wrong token', '/', () => ({ cookie: false, headers: { cookie: 'runbook_token=guess' } }), 403],
    ['another Host (DNS rebinding)', '/', () => ({ headers: { host: 'evil.example:80' } }), 421],
    ['localhost instead of 127.0.0.1', '/', () => ({ headers: { host: 'localhost' } }), 421],
    [
      'a call from another Origin',
      '/__runbook/call/app:info',
      () => ({ method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, body: '{}' }),
      403,
    ],
    ['a call with no Origin', '/__runbook/call/app:info', () => ({ method: 'POST', body: '{}' }), 403],
    ['a channel not in the contract', '/__runbook/call/shell:exec', () => ({ method: 'POST', headers: callHeaders(), body: '{}' }), 404],
    ['a GET call', '/__runbook/call/app:info', () => ({}), 405],
    ['an escape from the renderer folder', '/..%2f..%2f..%2fbfr-browser-secret.txt', () => ({}), 404],
    ['a double-encoded escape', '/%252e%252e%252fbfr-browser-secret.txt', () => ({}), 404],
  ])('refuses %s', async (_what, path, opts, status) => {
    const reply = await send(path, opts());
    expect(reply.status).toBe(status);
    expect(reply.body).not.toContain('secret');
  });

  it('serves the renderer with the CSP, and the bridge script before the app', async () => {
    const page = await send('/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.body).toContain('<script src="/__runbook/bridge.js"></script>\n    <script type="module" src="./assets/a.js">');
    const bridge = await send('/__runbook/bridge.js');
    expect(bridge.body).toBe(BRIDGE);
    expect(bridge.body).not.toContain(server.token);
  });

  it("answers a call with the handlers' Result, like ipcRenderer.invoke", async () => {
    const reply = await send('/__runbook/call/runbook:get', {
      method: 'POST',
      headers: callHeaders(),
      body: JSON.stringify({ runId: 'bf-1' }),
    });
    expect(JSON.parse(reply.body)).toEqual({ ok: true, value: { echo: { runId: 'bf-1' } } });
    const bad = await send('/__runbook/call/runbook:get', { method: 'POST', headers: callHeaders(), body: '{"runId": ' });
    expect(JSON.parse(bad.body)).toMatchObject({ ok: false, error: { code: 'input' } });
    const huge = await send('/__runbook/call/runbook:get', {
      method: 'POST',
      headers: callHeaders(),
      body: JSON.stringify({ runId: 'x'.repeat(5_000_000) }),
    });
    expect(JSON.parse(huge.body)).toMatchObject({ ok: false, error: { code: 'input' } });
    expect(reached).toEqual(['runbook:get']);
  });

  it('reads no call body past its cap: 413, and the connection closes', async () => {
    const over = await send('/__runbook/call/app:info', { method: 'POST', headers: callHeaders(), body: 'x'.repeat(MAX_BODY_BYTES + 1) });
    expect(over.status).toBe(413);
    expect(JSON.parse(over.body)).toMatchObject({
      ok: false,
      error: { code: 'input', message: expect.stringContaining('over') as string },
    });
    expect(over.headers.connection).toBe('close');
    // A body announced as a terabyte is refused on its headers, before a byte of it is sent.
    const url = new URL(server.origin);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: Number(url.port),
          path: '/__runbook/call/app:info',
          method: 'POST',
          headers: { ...callHeaders(), host: url.host, cookie: `runbook_token=${server.token}`, 'content-length': String(1e12) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        },
      );
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      req.flushHeaders();
    });
    expect(status).toBe(413);
    expect(reached).not.toContain('app:info');
    expect((await send('/')).status).toBe(200); // and it goes on serving
  });
});
