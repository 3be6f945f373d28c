/**
 * The test harness of DESIGN §3: the app's own handlers (electron/main/handlers, the same
 * contract, the same engine) served on loopback HTTP, the Vite-built renderer beside them, and
 * a `window.runbook` bridge (browserBridge.ts) so a real Chromium drives the real UI. Also what
 * `npm start` serves in browser mode when Electron's binary is missing.
 *
 * **Important**: this is a local server that can run backfills. It listens on 127.0.0.1 only,
 * answers only requests whose Host is exactly that address (no DNS rebinding), needs a per-run
 * random token (an HttpOnly, SameSite=Strict cookie) for every request, and takes calls only
 * from its own Origin.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { CALL_NAMES, EVENT_NAMES, type EventName } from '../../../shared/contract.ts';
import type { ProgressEvent } from '../../../shared/contractTypes.ts';
import { CONTENT_SECURITY_POLICY } from '../../../shared/csp.ts';
import { appResponseHeaders, resolveAppPath } from '../../../electron/main/appProtocol.ts';
import { registerHandlers, type IpcEventLike, type IpcMainLike } from '../../../electron/main/handlers/index.ts';
import { MAX_INPUT_CHARS } from '../../../electron/main/handlers/ipc.ts';
import type { RunbookService } from '../../../electron/engine/runbook/service.ts';

export const TOKEN_COOKIE = 'runbook_token';

export interface HarnessOptions {
  /** builds the engine service; `emit` sends its events to every connected page */
  createService: (emit: (event: ProgressEvent) => void) => RunbookService;
  /** the Vite-built renderer (.vite/renderer/main_window) */
  rendererDir: string;
  port?: number;
  /** browser mode: index.html loads the bridge itself (tests inject it as an init script instead) */
  injectBridgeTag?: boolean;
  log?: (line: string) => void;
}

export interface Harness {
  origin: string;
  token: string;
  /** opens a session: sets the token cookie and redirects to the app */
  enterUrl: string;
  service: RunbookService;
  /** the bridge script, for Playwright's addInitScript */
  bridgeScript: string;
  close: () => Promise<void>;
}

/** Electron's ipcMain, as a map the HTTP layer calls into. */
class HttpIpc implements IpcMainLike {
  readonly listeners = new Map<string, (event: IpcEventLike, ...args: unknown[]) => unknown>();
  handle(channel: string, listener: (event: IpcEventLike, ...args: unknown[]) => unknown): void {
    this.listeners.set(channel, listener);
  }
  removeHandler(channel: string): void {
    this.listeners.delete(channel);
  }
}

export async function bundleBridge(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./browserBridge.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    write: false,
    logLevel: 'warning',
  });
  return result.outputFiles[0]?.text ?? '';
}

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const token = randomBytes(32).toString('base64url');
  const bridgeScript = await bundleBridge();
  const streams = new Set<ServerResponse>();
  const send = (event: EventName, payload: unknown): void => {
    const frame = `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
    for (const s of streams) s.write(frame);
  };
  const service = options.createService((event) => send('run:progress', event));
  const ipc = new HttpIpc();
  let origin = '';
  registerHandlers(
    ipc,
    {
      // The HTTP layer has authenticated the page (token, Host, Origin); the handler's own
      // check is the same as in Electron: the sender shows our page.
      trust: (event) => event.senderFrame !== null && event.senderFrame.url.startsWith(`${origin}/`),
      redact: (text) => service.redact(text),
      log: (channel, err) => options.log?.(`[${channel}] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
    },
    service,
  );

  const server = createServer((req, res) => {
    void route(req, res).catch((err: unknown) => {
      options.log?.(`harness error: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) res.writeHead(500).end('internal error');
    });
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = new URL(origin).host;
    if (req.headers.host !== host)
      return void res.writeHead(421, { 'content-type': 'text/plain' }).end(`this server answers only to ${host}`);
    const url = new URL(req.url ?? '/', origin);
    if (url.pathname === '/__runbook/enter') {
      if (!sameToken(url.searchParams.get('token'), token))
        return void res
          .writeHead(403, { 'content-type': 'text/plain' })
          .end('wrong or missing token: use the address printed by npm start');
      res.writeHead(302, { location: '/', 'set-cookie': `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/` });
      return void res.end();
    }
    if (!sameToken(cookieOf(req, TOKEN_COOKIE), token)) {
      return void res
        .writeHead(403, { 'content-type': 'text/plain' })
        .end('this address needs the token: open the address printed by npm start');
    }
    if (url.pathname.startsWith('/__runbook/call/'))
      return call(req, res, decodeURIComponent(url.pathname.slice('/__runbook/call/'.length)));
    if (url.pathname === '/__runbook/events') return events(res);
    if (url.pathname === '/__runbook/bridge.js') {
      return void res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' }).end(bridgeScript);
    }
    return serveStatic(req, res, url);
  }

  async function call(req: IncomingMessage, res: ServerResponse, channel: string): Promise<void> {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    if (req.headers.origin !== origin)
      return void res.writeHead(403, { 'content-type': 'text/plain' }).end('calls are taken from the app page only');
    const listener = (CALL_NAMES as string[]).includes(channel) ? ipc.listeners.get(channel) : undefined;
    if (!listener) return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`no call ${channel} in the contract`);
    const body = await readBody(req, MAX_INPUT_CHARS * 2);
    if (body === undefined) {
      return void res.writeHead(413, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          ok: false,
          error: { code: 'input', message: `${channel} refused its input: over ${MAX_INPUT_CHARS * 2} bytes` },
        }),
      );
    }
    let input: unknown;
    try {
      input = body === null ? undefined : JSON.parse(body);
    } catch {
      input = Symbol('not JSON'); // refused by the handler's own checks, like any bad input
    }
    const event: IpcEventLike = { senderFrame: { url: req.headers.referer ?? `${origin}/` }, sender: { id: 1 } };
    const result = await listener(event, body === null ? undefined : input);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(result));
  }

  function events(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write(`: ${EVENT_NAMES.join(', ')}\n\n`);
    streams.add(res);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    res.on('close', () => {
      clearInterval(keepAlive);
      streams.delete(res);
    });
  }

  async function serveStatic(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405).end();
    // The same traversal guard as Electron's app:// protocol.
    const file = resolveAppPath(options.rendererDir, `app://runbook${url.pathname}`);
    if (!file) return void res.writeHead(404).end('not found');
    let data: Buffer;
    try {
      data = await readFile(file);
    } catch {
      return void res.writeHead(404).end('not found');
    }
    const headers = { ...appResponseHeaders(file), 'content-security-policy': CONTENT_SECURITY_POLICY };
    if (file.endsWith('index.html') && options.injectBridgeTag) {
      data = Buffer.from(data.toString('utf8').replace('<script', '<script src="/__runbook/bridge.js"></script>\n    <script'));
    }
    res.writeHead(200, headers).end(req.method === 'HEAD' ? undefined : data);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    token,
    enterUrl: `${origin}/__runbook/enter?token=${token}`,
    service,
    bridgeScript,
    async close() {
      for (const s of streams) s.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.close();
    },
  };
}

function sameToken(given: string | null | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

/** The body as text; undefined when it is over `limit` (read to the end and dropped, so the reply still arrives). */
function readBody(req: IncomingMessage, limit: number): Promise<string | null | undefined> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > limit ? undefined : size === 0 ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
