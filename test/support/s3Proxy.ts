/**
 * A loopback HTTP proxy between the AWS SDK and s3rver that injects S3 failures on chosen
 * requests: 503 SlowDown, 500 InternalError, a connection reset halfway through a request
 * body, or a request held forever — before it reaches the server, or after the server has
 * applied it but before the client hears back (for SIGKILL before / after a commit).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type S3FaultAction = 'slowdown' | 'internal-error' | 'reset-mid-body' | 'reset-mid-response' | 'hold-before' | 'hold-after';

export interface S3Fault {
  method?: string;
  /** tested against the path and query, e.g. /bucket/key?partNumber=2&uploadId=… */
  url: RegExp;
  action: S3FaultAction;
  /** how many matching requests to let through first */
  skip?: number;
  /** how many times to fire (default 1) */
  times?: number;
  /** hold-*: told when the request is being held */
  onHold?: () => void;
}

export interface S3Proxy {
  endpoint: string;
  arm(fault: S3Fault): void;
  /** how many times each armed fault fired, in arming order */
  fired(): number[];
  /** disarms every fault */
  reset(): void;
  /** every request seen: "PUT /bucket/key?uploadId=…" */
  log: string[];
  close(): Promise<void>;
}

const ERRORS = {
  slowdown: { status: 503, code: 'SlowDown', message: 'Please reduce your request rate.' },
  'internal-error': { status: 500, code: 'InternalError', message: 'We encountered an internal error. Please try again.' },
} as const;

export async function startS3Proxy(upstream: string): Promise<S3Proxy> {
  const target = new URL(upstream);
  const faults: (S3Fault & { seen: number; count: number })[] = [];
  const sockets = new Set<Socket>();
  const log: string[] = [];

  const server = http.createServer((req, res) => {
    const line = `${req.method ?? ''} ${req.url ?? ''}`;
    log.push(line);
    const fault = faults.find(
      (f) => (f.method === undefined || f.method === req.method) && f.url.test(req.url ?? '') && f.count < (f.times ?? 1),
    );
    if (fault) {
      fault.seen += 1;
      if (fault.seen > (fault.skip ?? 0)) {
        fault.count += 1;
        act(fault, req, res);
        return;
      }
    }
    forward(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  function forward(req: http.IncomingMessage, res: http.ServerResponse, hold?: () => void, cutHalfway = false): void {
    const up = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (upRes) => {
        if (hold) {
          upRes.resume(); // the server has applied it; the client never hears
          upRes.on('end', hold);
          return;
        }
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        if (cutHalfway) {
          const length = Number(upRes.headers['content-length'] ?? 0);
          let sent = 0;
          upRes.on('data', (chunk: Buffer) => {
            if (sent + chunk.length >= length / 2) {
              // headers and half the body reach the client; then the connection drops
              res.write(chunk.subarray(0, Math.max(1, Math.floor(length / 2) - sent)), () => setTimeout(() => res.socket?.destroy(), 30));
              upRes.destroy();
              return;
            }
            sent += chunk.length;
            res.write(chunk);
          });
          return;
        }
        upRes.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  }

  function act(fault: S3Fault, req: http.IncomingMessage, res: http.ServerResponse): void {
    switch (fault.action) {
      case 'slowdown':
      case 'internal-error': {
        const e = ERRORS[fault.action];
        req.resume();
        req.on('end', () => {
          res.writeHead(e.status, { 'content-type': 'application/xml', 'x-amz-request-id': 'fault' });
          res.end(
            `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${e.code}</Code><Message>${e.message}</Message><RequestId>fault</RequestId></Error>`,
          );
        });
        return;
      }
      case 'reset-mid-body': {
        const length = Number(req.headers['content-length'] ?? 0);
        let received = 0;
        req.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received >= length / 2) req.socket.destroy();
        });
        if (length === 0) req.socket.destroy();
        return;
      }
      case 'reset-mid-response':
        forward(req, res, undefined, true);
        return;
      case 'hold-before':
        req.resume();
        fault.onHold?.();
        return;
      case 'hold-after':
        forward(req, res, () => fault.onHold?.());
        return;
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    arm: (fault) => faults.push({ ...fault, seen: 0, count: 0 }),
    fired: () => faults.map((f) => f.count),
    reset: () => void faults.splice(0),
    log,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
