/**
 * Browser mode's server (docs/design.md §3): the app's own handlers (electron/main/handlers, the same
 * contract, the same engine) served on loopback HTTP, the Vite-built renderer beside them, and
 * the `window.runbook` bridge (pageBridge.ts, built to a script by scripts/build-node.mjs) so
 * any browser drives the real UI. `npm start` serves it where Electron's binary is missing; the
 * end-to-end tests drive the very same server in Chromium.
 *
 * **Important**: this is a local server that can run backfills. It listens on 127.0.0.1 only,
 * answers only requests whose Host is exactly that address (no DNS rebinding), needs a per-run
 * random token (an HttpOnly, SameSite=Strict cookie) for every request, takes calls only from
 * its own Origin, and reads no request body beyond MAX_BODY_BYTES.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CALL_NAMES, EVENT_NAMES, type EventName } from '../../shared/contract.ts';
import type { ProgressEvent } from '../../shared/contractTypes.ts';
import { CONTENT_SECURITY_POLICY } from '../../shared/csp.ts';
import { appResponseHeaders, resolveAppPath } from '../main/appProtocol.ts';
import { registerHandlers, type IpcEventLike, type IpcMainLike } from '../main/handlers/index.ts';
import type { RunbookService } from '../engine/runbook/service.ts';
import { cookieOf, MAX_BODY_BYTES, readBody, sameToken } from './http.ts';

export const TOKEN_COOKIE = 'runbook_token';

export interface BrowserServerOptions {
  /** builds the engine service; `emit` sends its events to every connected page */
  createService: (emit: (event: ProgressEvent) => void) => RunbookService;
  /** the Vite-built renderer (.vite/renderer/main_window) */
  rendererDir: string;
  /** the page's `window.runbook` script (pageBridge.ts as built by scripts/build-node.mjs) */
  bridgeScript: string;
  port?: number;
  log?: (line: string) => void;
}

export interface BrowserServer {
  origin: string;
  token: string;
  /** opens a session: sets the token cookie and redirects to the app */
  enterUrl: string;
  service: RunbookService;
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

export async function startBrowserServer(options: BrowserServerOptions): Promise<BrowserServer> {
  const token = randomBytes(32).toString('base64url');
  const { bridgeScript } = options;
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
      options.log?.(`browser mode server error: ${err instanceof Error ? err.message : String(err)}`);
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
    const body = await readBody(req, MAX_BODY_BYTES);
    if (body === undefined) {
      const error = { code: 'input', message: `${channel} refused its input: over ${MAX_BODY_BYTES} bytes` };
      // The rest of the body is never read: the connection closes after this answer.
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ ok: false, error }));
      return void res.once('finish', () => req.destroy());
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
    if (file.endsWith('index.html')) {
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
    async close() {
      for (const s of streams) s.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.close();
    },
  };
}
