/**
 * A lean HTTP/1.1 server on `net` (or `tls`, ALPN http/1.1) sockets: one Connection per socket
 * (server-connection.ts), Nagle off (noDelay), half-open sockets allowed so a client that shuts down its
 * sending side still gets its answers.
 *
 * Timeouts are checked by one sweep over the connections every min(1 s, shortest timeout / 4) (at
 * least 10 ms), not by a timer per request; the sweep also advances the coarse clock connections
 * read. Defaults (gateway/http/listener.ts): request 60 s, idle 30 s, stream stall 30 s (server-connection.ts).
 *
 * Connection limits, checked when a TCP connection is accepted (before any TLS handshake or byte is
 * read): at most `maxConnections` open at once (Node's own `server.maxConnections`: the socket is
 * closed in the accept callback, before a Socket object is made) and at most `maxConnectionsPerClient`
 * per remote address (counted here; addresses `uncountedPeer` names are not). A connection over either limit is closed at once without an
 * answer: nothing of it is read, no handshake is spent on it (a 503 would need both). `refused` tells
 * the application which limit refused one.
 *
 * `close(graceMs)`: stops accepting at once; destroys at once every connection with nothing
 * unanswered (idle keep-alive, never sent a request, sent part of a head, TLS handshake unfinished);
 * lets unanswered requests finish — the last answer on each connection carries `connection: close`
 * and the connection ends once it is written; after `graceMs` destroys whatever is still open, sockets
 * handed to `Http1App.upgrade` included. Resolves when every connection is gone.
 *
 * A running server takes new settings (a config reload): `adjust` changes the connection limits for
 * connections accepted from then on (open ones stay), the body limit for connections opened from then on,
 * and the stream stall limit for every connection at its next sweep; `secure` swaps the certificate and
 * key that new TLS handshakes present (handshakes done keep theirs).
 */
import net, { type AddressInfo, type Socket } from 'node:net';
import tls from 'node:tls';
import type { BufferPool } from '../buffer-pool.js';
import type { WriterContext } from './answer-writer.js';
import type { Http1App } from './http1-app.js';
import { ServerConnection } from './server-connection.js';

export interface Http1ServerOptions {
  /** PEM certificate and key: serve HTTPS. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
  maxBodyBytes: number;
  /** Longest time for a request's head and body to arrive, from its first byte (ms). */
  requestTimeoutMs: number;
  /** Longest time a connection may sit with no request (ms). */
  idleTimeoutMs: number;
  /** Unanswered requests per connection before reading pauses (default 16). */
  pipelineDepth?: number;
  /** A streamed answer whose client takes nothing for this long is cut (ms; default 30 s). */
  streamStallMs?: number;
  /** Connections open at once (default: no limit). */
  maxConnections?: number;
  /** Connections per remote address at once (default: no limit). */
  maxConnectionsPerClient?: number;
  /** Remote addresses maxConnectionsPerClient does not count (a proxy carrying many clients); default none. */
  uncountedPeer?: (address: string) => boolean;
  /** A connection was closed on accept for being over a limit. */
  refused?: (limit: 'max_connections' | 'max_connections_per_client') => void;
  /**
   * Where streamed answers' pieces are released once written (views of recycled read buffers): the
   * pool the client that read them took them from (../buffer-pool.ts).
   */
  buffers: BufferPool;
}

/** What `adjust` changes on a running server (absent: unchanged). */
export type Http1ServerLimits = Partial<
  Pick<Http1ServerOptions, 'maxBodyBytes' | 'streamStallMs' | 'maxConnections' | 'maxConnectionsPerClient'>
>;

/** Settings and counters shared by a server's connections . */
export interface ServerContext extends WriterContext {
  readonly app: Http1App;
  maxBodyBytes: number;
  streamStallMs: number;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly pipelineDepth: number;
  now: number;
  /** Exchanges handed to the application and not yet answered in full, on every connection. */
  inFlight: number;
  forget(connection: ServerConnection): void;
  /** `socket` was handed to `app.upgrade` (the server closes it when its grace period ends). */
  upgraded(socket: Socket): void;
}

export class Http1Server {
  readonly #server: net.Server;
  readonly #connections = new Set<ServerConnection>();
  /** Sockets handed to `app.upgrade` and still open. */
  readonly #upgraded = new Set<Socket>();
  /** TLS: accepted TCP sockets whose handshake has not finished, by peer address. */
  readonly #handshaking = new Map<string, Socket>();
  readonly #ctx: ServerContext;
  readonly #sweepMs: number;
  /** Open connections per remote address (TCP, handshakes included). */
  readonly #perClient = new Map<string, number>();
  #maxPerClient: number;
  readonly #uncountedPeer: ((address: string) => boolean) | undefined;
  readonly #refused: ((limit: 'max_connections' | 'max_connections_per_client') => void) | undefined;
  #sweep: NodeJS.Timeout | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: Http1ServerOptions, app: Http1App) {
    const connections = this.#connections;
    const upgraded = this.#upgraded;
    const streamStallMs = options.streamStallMs ?? 30_000;
    this.#maxPerClient = options.maxConnectionsPerClient ?? Number.POSITIVE_INFINITY;
    this.#uncountedPeer = options.uncountedPeer;
    this.#refused = options.refused;
    this.#ctx = {
      app,
      maxBodyBytes: options.maxBodyBytes,
      requestTimeoutMs: options.requestTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs,
      streamStallMs,
      pipelineDepth: options.pipelineDepth ?? 16,
      buffers: options.buffers,
      now: performance.now(),
      inFlight: 0,
      forget: (connection) => connections.delete(connection),
      upgraded: (socket) => {
        upgraded.add(socket);
        socket.once('close', () => upgraded.delete(socket));
      },
    };
    this.#sweepMs = Math.max(
      10,
      Math.min(1000, options.requestTimeoutMs / 4, options.idleTimeoutMs / 4, streamStallMs / 4),
    );
    if (options.tls === undefined) {
      this.#server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
        if (this.#admit(socket)) this.#accept(socket);
      });
      this.#limit(options.maxConnections);
      return;
    }
    const server = tls.createServer({
      cert: options.tls.cert,
      key: options.tls.key,
      ALPNProtocols: ['http/1.1'],
      allowHalfOpen: true,
      noDelay: true,
    });
    server.on('connection', (tcp: Socket) => {
      if (this.#closing !== undefined) {
        tcp.destroy();
        return;
      }
      if (!this.#admit(tcp)) return;
      const key = peer(tcp);
      if (key === undefined) return;
      this.#handshaking.set(key, tcp);
      tcp.once('close', () => {
        if (this.#handshaking.get(key) === tcp) this.#handshaking.delete(key);
      });
    });
    server.on('secureConnection', (socket: tls.TLSSocket) => {
      const key = peer(socket);
      if (key !== undefined) this.#handshaking.delete(key);
      this.#accept(socket);
    });
    this.#server = server;
    this.#limit(options.maxConnections);
  }

  /** New limits (see the header): `maxConnections` and `maxConnectionsPerClient` for the next accept. */
  adjust(limits: Http1ServerLimits): void {
    if (limits.maxBodyBytes !== undefined) this.#ctx.maxBodyBytes = limits.maxBodyBytes;
    if (limits.streamStallMs !== undefined) this.#ctx.streamStallMs = limits.streamStallMs;
    if (limits.maxConnectionsPerClient !== undefined) this.#maxPerClient = limits.maxConnectionsPerClient;
    if (limits.maxConnections !== undefined) this.#server.maxConnections = limits.maxConnections;
  }

  /** The certificate and key new TLS handshakes present (a plain HTTP server: an error). */
  secure(pem: { cert: Buffer; key: Buffer }): void {
    if (!(this.#server instanceof tls.Server)) throw new Error('this server does not serve TLS');
    this.#server.setSecureContext({ cert: pem.cert, key: pem.key });
  }

  /** Requests handed to the application whose answer has not been written in full. */
  get inFlight(): number {
    return this.#ctx.inFlight;
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject);
        this.#sweep = setInterval(() => this.#tick(), this.#sweepMs);
        this.#sweep.unref();
        resolve(this.#server.address() as AddressInfo);
      });
    });
  }

  close(graceMs: number): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        for (const connection of this.#connections) connection.destroy();
        for (const tcp of this.#handshaking.values()) tcp.destroy();
        for (const socket of this.#upgraded) socket.destroy();
      }, graceMs);
      timer.unref();
      this.#server.close(() => {
        clearTimeout(timer);
        clearInterval(this.#sweep);
        resolve();
      });
      for (const tcp of this.#handshaking.values()) tcp.destroy();
      for (const connection of [...this.#connections]) connection.shutdown();
    });
    return this.#closing;
  }

  /** Node closes connections over `max` in its accept callback; 'drop' says it did. */
  #limit(max: number | undefined): void {
    if (max === undefined) return;
    this.#server.maxConnections = max;
    this.#server.on('drop', () => this.#refused?.('max_connections'));
  }

  /** Counts the connection against its address, or closes it when that address is at its limit. */
  #admit(socket: Socket): boolean {
    const address = socket.remoteAddress;
    if (address === undefined) {
      socket.destroy(); // already gone
      return false;
    }
    if (this.#uncountedPeer?.(address) === true) return true;
    const open = this.#perClient.get(address) ?? 0;
    if (open >= this.#maxPerClient) {
      socket.destroy();
      this.#refused?.('max_connections_per_client');
      return false;
    }
    this.#perClient.set(address, open + 1);
    socket.once('close', () => {
      const left = (this.#perClient.get(address) ?? 1) - 1;
      if (left <= 0) this.#perClient.delete(address);
      else this.#perClient.set(address, left);
    });
    return true;
  }

  #accept(socket: Socket): void {
    if (this.#closing !== undefined) {
      socket.destroy();
      return;
    }
    this.#connections.add(new ServerConnection(socket, this.#ctx));
  }

  #tick(): void {
    const now = performance.now();
    this.#ctx.now = now;
    for (const connection of this.#connections) connection.tick(now);
  }
}

function peer(socket: Socket): string | undefined {
  return socket.remoteAddress === undefined ? undefined : `${socket.remoteAddress}|${socket.remotePort}`;
}
