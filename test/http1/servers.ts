/**
 * Real origins on free ports for the HTTP/1.1 client's tests (and the gateway's origin tests): a
 * node:http server that counts TCP connections and lets a test hold answers, and a raw TCP server that
 * answers with exact bytes (for what node:http would never send: bad framing, unsolicited bytes,
 * dropped sockets).
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';

/** Waits, bounded, until `condition` holds (polling: no sleep stands in for an event). */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Index of the TCP connection it came on (0-based, in accept order). */
  connection: number;
  res: http.ServerResponse;
}

export interface CountingServer {
  url: string;
  /** TCP connections accepted so far. */
  connections: number;
  /** Sockets currently open. */
  open: Set<net.Socket>;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** A node:http origin; `answer` replies (or holds the request to reply later through `received`). */
export async function countingServer(
  answer: (req: ReceivedRequest) => void = (req) => req.res.end(`echo:${req.body}`),
  options: http.ServerOptions = {},
): Promise<CountingServer> {
  const state: Omit<CountingServer, 'url' | 'close'> = { connections: 0, open: new Set(), received: [] };
  const index = new WeakMap<net.Socket, number>();
  const server = http.createServer({ keepAliveTimeout: 60_000, ...options }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        connection: index.get(req.socket) ?? -1,
        res,
      };
      state.received.push(received);
      answer(received);
    });
  });
  server.on('connection', (socket: net.Socket) => {
    index.set(socket, state.connections);
    state.connections += 1;
    state.open.add(socket);
    socket.on('close', () => state.open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

export interface RawServer {
  url: string;
  port: number;
  sockets: net.Socket[];
  /** Requests received, per connection index. */
  requests: Array<{ connection: number; body: string }>;
  close(): Promise<void>;
}

/**
 * A TCP origin that parses requests just enough (head, Content-Length body) and lets `answer` write
 * raw bytes to the socket (or do anything else with it).
 */
export async function rawServer(
  answer: (socket: net.Socket, request: { connection: number; body: string; count: number }) => void,
): Promise<RawServer> {
  const sockets: net.Socket[] = [];
  const requests: RawServer['requests'] = [];
  const server = net.createServer((socket) => {
    const connection = sockets.length;
    sockets.push(socket);
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    let count = 0;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buffered.toString('latin1', 0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const body = buffered.toString('utf8', end + 4, end + 4 + length);
        buffered = buffered.subarray(end + 4 + length);
        requests.push({ connection, body });
        answer(socket, { connection, body, count: count++ });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    sockets,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
