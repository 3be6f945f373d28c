/**
 * A loopback TCP proxy in front of PostgreSQL that understands just enough of the wire
 * protocol (message framing, Query 'Q' and Parse 'P' texts) to cut a connection at an exact
 * moment: right after COMMIT reached the server, in the middle of an INSERT or a COPY.
 */
import net from 'node:net';

export type FaultAction =
  /** forward the statement, swallow the server's answer, then drop the client: the ambiguous commit */
  | 'cut-after-server-answers'
  /** forward the statement and drop both sides a moment later, while it runs */
  | 'cut-while-running'
  /** drop both sides before the statement reaches the server */
  | 'cut-before';

export interface Fault {
  match: RegExp;
  action: FaultAction;
  /** how many matching statements to let through first */
  skip?: number;
  /** after firing, refuse new connections until refuse(false): the server is gone */
  thenRefuse?: boolean;
}

export interface PgProxy {
  port: number;
  /** Arms a fault; it fires once. */
  arm(fault: Fault): void;
  fired(): number;
  /** Refuse new connections (a dead server) until allowed again. */
  refuse(on: boolean): void;
  close(): Promise<void>;
}

export async function startPgProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<PgProxy> {
  let armed: (Fault & { seen: number }) | null = null;
  let firedCount = 0;
  let refusing = false;
  const sockets = new Set<net.Socket>();

  const server = net.createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client).add(upstream);
    const cut = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
    let swallowNextAnswer = false;
    let dropAllAfterCut = false;
    upstream.on('data', (chunk) => {
      if (swallowNextAnswer) {
        cut();
        // The whole server is gone: every other connection drops too.
        if (dropAllAfterCut) for (const s of sockets) s.destroy();
        return;
      }
      client.write(chunk);
    });

    let buffer = Buffer.alloc(0);
    let startupDone = false;
    client.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!startupDone) {
          if (buffer.length < 4) return;
          const len = buffer.readInt32BE(0);
          if (buffer.length < len) return;
          upstream.write(buffer.subarray(0, len));
          buffer = buffer.subarray(len);
          startupDone = true;
          continue;
        }
        if (buffer.length < 5) return;
        const type = String.fromCharCode(buffer[0] ?? 0);
        const len = buffer.readInt32BE(1);
        if (buffer.length < 1 + len) return;
        const message = buffer.subarray(0, 1 + len);
        buffer = buffer.subarray(1 + len);
        const text = type === 'Q' ? message.subarray(5).toString('utf8') : type === 'P' ? parseText(message) : '';
        const fault = armed;
        if (fault && text && fault.match.test(text)) {
          fault.seen += 1;
          if (fault.seen > (fault.skip ?? 0)) {
            armed = null;
            firedCount += 1;
            if (fault.thenRefuse) refusing = true;
            dropAllAfterCut = Boolean(fault.thenRefuse);
            if (fault.action === 'cut-before') {
              cut();
              return;
            }
            upstream.write(message);
            if (fault.action === 'cut-after-server-answers') swallowNextAnswer = true;
            else setTimeout(cut, 15);
            continue;
          }
        }
        upstream.write(message);
      }
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    arm: (fault) => (armed = { ...fault, seen: 0 }),
    fired: () => firedCount,
    refuse: (on) => (refusing = on),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Parse message: 'P', int32 len, statement name\0, query text\0, … */
function parseText(message: Buffer): string {
  const nameEnd = message.indexOf(0, 5);
  const textEnd = message.indexOf(0, nameEnd + 1);
  return message.subarray(nameEnd + 1, textEnd).toString('utf8');
}
