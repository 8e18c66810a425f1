/**
 * Graceful, prompt close of a node:http(s) server: the management API listener's (the gateway's own
 * HTTP/1.1 listener does the same in src/http1/server/http1-server.ts).
 *
 * `server.close()` alone stops accepting but then waits for every open connection to end: idle
 * keep-alive sockets for up to their keep-alive timeout, and sockets that never sent a complete request
 * (a browser's pre-opened connection, a half-sent header) until the request timeout. So `close(graceMs)`
 * here, at once:
 *   - stops accepting new connections;
 *   - destroys every connection with no request in flight — idle keep-alive sockets, sockets that never
 *     sent a request or sent only part of its headers, TLS sockets still in their handshake;
 *   - lets requests in flight finish: their responses carry `Connection: close` (when their headers are
 *     not sent yet), and each such connection is closed as soon as its last response ends;
 *   - after `graceMs`, destroys whatever is still open.
 * It resolves when every connection is gone, so nothing of the server keeps the process alive.
 *
 * Requests are counted per connection. With TLS the request's socket is the TLSSocket while `connection`
 * reports the TCP socket underneath; both are matched by the peer's address and port (unique among open
 * connections to one listener).
 */
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

interface TrackedConnection {
  readonly tcp: Socket;
  /** The socket requests arrive on: the TLSSocket for HTTPS, else `tcp`. */
  requestSocket: Socket;
  inFlight: number;
}

export class ConnectionTracker {
  readonly #server: HttpServer;
  readonly #byPeer = new Map<string, TrackedConnection>();
  readonly #bySocket = new WeakMap<Socket, TrackedConnection>();
  readonly #responses = new Set<ServerResponse>();
  #closing: Promise<void> | undefined;

  constructor(server: HttpServer) {
    this.#server = server;
    server.on('connection', (socket: Socket) => this.#connected(socket));
    server.on('secureConnection', (socket: Socket) => {
      const key = peer(socket);
      const connection = key === undefined ? undefined : this.#byPeer.get(key);
      if (connection === undefined) return;
      connection.requestSocket = socket;
      this.#bySocket.set(socket, connection);
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.#request(req, res));
  }

  /** Requests whose response has not ended yet. */
  get inFlight(): number {
    return this.#responses.size;
  }

  /** Stops accepting, finishes requests in flight within `graceMs`, closes every connection. Idempotent. */
  close(graceMs: number): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        for (const connection of this.#byPeer.values()) connection.tcp.destroy();
      }, graceMs);
      timer.unref();
      this.#server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      for (const res of this.#responses) if (!res.headersSent) res.setHeader('connection', 'close');
      for (const connection of this.#byPeer.values()) {
        if (connection.inFlight === 0) connection.tcp.destroy();
      }
    });
    return this.#closing;
  }

  #connected(tcp: Socket): void {
    const key = peer(tcp);
    if (key === undefined) return; // already gone
    const connection: TrackedConnection = { tcp, requestSocket: tcp, inFlight: 0 };
    this.#byPeer.set(key, connection);
    this.#bySocket.set(tcp, connection);
    tcp.once('close', () => {
      if (this.#byPeer.get(key) === connection) this.#byPeer.delete(key);
    });
    if (this.#closing !== undefined) tcp.destroy();
  }

  #request(req: IncomingMessage, res: ServerResponse): void {
    const connection = this.#bySocket.get(req.socket);
    this.#responses.add(res);
    if (connection !== undefined) connection.inFlight += 1;
    if (this.#closing !== undefined && !res.headersSent) res.setHeader('connection', 'close');
    res.once('close', () => {
      this.#responses.delete(res);
      if (connection === undefined) return;
      connection.inFlight -= 1;
      // While closing, a connection whose last response just ended is not reused: close it now
      // instead of waiting for the grace timer (its answer is already written).
      if (this.#closing !== undefined && connection.inFlight === 0) connection.requestSocket.destroySoon();
    });
  }
}

function peer(socket: Socket): string | undefined {
  return socket.remoteAddress === undefined ? undefined : `${socket.remoteAddress}|${socket.remotePort}`;
}
