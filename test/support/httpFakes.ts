/**
 * Small HTTP servers on 127.0.0.1 for the throttle and notification tests, plain node:http:
 * a Prometheus-compatible query API whose value a test sets (and a JSON endpoint beside it,
 * Burrow-style), and a webhook receiver that keeps every request — or answers 500, or never
 * answers at all.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  json: unknown;
}

interface Running {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

async function serve(handle: (r: Received, res: ServerResponse) => void): Promise<Running & { server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://127.0.0.1');
      let json: unknown;
      try {
        json = body ? (JSON.parse(body) as unknown) : null;
      } catch {
        json = null;
      }
      const r = { method: req.method ?? '', path: u.pathname, query: u.searchParams, headers: req.headers, body, json };
      received.push(r);
      handle(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

export interface FakeMonitoring extends Running {
  /** the value the next query answers; null: an empty vector (no series) */
  value: number | null;
  /** the Burrow-style endpoint's total lag; 'error': it answers 500 */
  lag: number | 'error';
}

/** GET /api/v1/query (Prometheus instant query) and GET /v3/kafka/local/consumer/orders/lag (Burrow-style). */
export async function startFakeMonitoring(initial = 0): Promise<FakeMonitoring> {
  // Read at each request: a test changes `value` and `lag` on the object returned.
  const state = { value: initial as number | null, lag: 0 as number | 'error' };
  const running = await serve((r, res) => {
    if (r.path === '/api/v1/query') {
      const result = state.value === null ? [] : [{ metric: { instance: 'db-1' }, value: [Date.now() / 1000, String(state.value)] }];
      return json(res, 200, { status: 'success', data: { resultType: 'vector', result } });
    }
    if (r.path === '/v3/kafka/local/consumer/orders/lag') {
      if (state.lag === 'error') return json(res, 500, { error: true, message: 'cluster not found' });
      return json(res, 200, { error: false, status: { cluster: 'local', group: 'orders', status: 'OK', totallag: state.lag } });
    }
    json(res, 404, { error: 'not found' });
  });
  return Object.defineProperties(running, {
    value: { get: () => state.value, set: (v: number | null) => (state.value = v), enumerable: true },
    lag: { get: () => state.lag, set: (v: number | 'error') => (state.lag = v), enumerable: true },
  }) as unknown as FakeMonitoring;
}

/** A webhook receiver: 'ok' answers 200, 'fail' answers 500, 'hang' never answers. */
export async function startWebhookReceiver(mode: 'ok' | 'fail' | 'hang' = 'ok'): Promise<Running> {
  return serve((_r, res) => {
    if (mode === 'hang') return; // the connection stays open, unanswered, until close()
    if (mode === 'fail') return json(res, 500, { ok: false });
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
}
