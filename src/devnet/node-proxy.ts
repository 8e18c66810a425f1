/**
 * The address clients use for one devnet node (with more than one node): a small HTTP proxy in front of
 * the node's anvil, on `devnet.base_port + i` (the anvil itself listens on a free port of 127.0.0.1). It
 * forwards every request unchanged, and gives the replicator four handles:
 *
 * - a gate: `hold(work)` makes client requests that arrive from now on wait until `work` is done (the
 *   hold starts synchronously, before `hold` returns; holds may overlap). `exclusive(work)` holds too,
 *   waits for the client requests already in flight (at most `drainMs`, default 1000 ms, else it throws
 *   `NodeUnreachable`) and runs one exclusive work at a time; a hold never delays an exclusive work (the
 *   replicator replays behind the holds it placed itself). So no client sees the inside of a replay (a
 *   pool emptied for a moment, a block undone) or a state the other nodes do not share yet, and no
 *   client transaction slips into a replayed block;
 * - a refusal: while a node that was lost (or was the leader before a failover) catches up, requests are
 *   answered HTTP 503 with a JSON-RPC error, so the gateway's monitor keeps it Unhealthy until it is one
 *   chain with the others again;
 * - `intercept(body)`: may answer a request itself (the devnet's mining calls, mining-control.ts) instead
 *   of the node; it returns undefined at once for everything else;
 * - `onTransaction()`: called synchronously when the answer to a request naming eth_sendRawTransaction or
 *   eth_sendTransaction has been passed on, before the next request is read.
 *
 * When the anvil process exits, `close()` stops listening, so clients get "connection refused" as they
 * would from the dead node itself. Bodies are buffered (JSON-RPC requests are small); no timeout is added
 * (the client's own applies).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeUnreachable } from './node-rpc.js';

export interface NodeGate {
  hold<T>(work: () => Promise<T>): Promise<T>;
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  refuse(message: string): void;
  accept(): void;
}

export interface NodeProxyOptions {
  host: string;
  /** 0 = a free port. */
  port: number;
  /** The anvil's own URL. */
  target: string;
  drainMs?: number;
}

export class NodeProxy implements NodeGate {
  readonly url: string;
  readonly port: number;
  /** Answers a request instead of the node (a JSON-RPC response body), or returns undefined. */
  intercept: (body: Buffer) => Promise<string> | undefined = () => undefined;
  onTransaction: () => void = () => undefined;
  readonly #server: http.Server;
  readonly #agent = new http.Agent({ keepAlive: true });
  readonly #target: URL;
  readonly #drainMs: number;
  #inFlight = 0;
  #drained: (() => void) | undefined;
  /** Holds in force; client requests wait while it is above 0. */
  #holding = 0;
  #released: { promise: Promise<void>; resolve: () => void } = settled();
  /** Exclusive works, one after the other. */
  #exclusives: Promise<unknown> = Promise.resolve();
  #refusal: string | undefined;
  #closed: Promise<void> | undefined;

  static async listen(options: NodeProxyOptions): Promise<NodeProxy> {
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new NodeProxy(server, options);
  }

  private constructor(server: http.Server, options: NodeProxyOptions) {
    this.#server = server;
    this.#target = new URL(options.target);
    this.#drainMs = options.drainMs ?? 1000;
    this.port = (server.address() as AddressInfo).port;
    this.url = `http://${options.host}:${this.port}`;
    server.on('request', (req, res) => this.#handle(req, res));
  }

  refuse(message: string): void {
    this.#refusal = message;
  }

  accept(): void {
    this.#refusal = undefined;
  }

  hold<T>(work: () => Promise<T>): Promise<T> {
    this.#enterHold();
    return Promise.resolve()
      .then(work)
      .finally(() => this.#leaveHold());
  }

  exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.#enterHold();
    const run = this.#exclusives.then(async () => {
      await this.#drain();
      return work();
    });
    this.#exclusives = run.catch(() => undefined);
    return run.finally(() => this.#leaveHold());
  }

  /** Stops listening and drops every connection (idempotent). */
  close(): Promise<void> {
    this.#closed ??= new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
      this.#agent.destroy();
    });
    return this.#closed;
  }

  #enterHold(): void {
    if (this.#holding === 0) this.#released = pending();
    this.#holding += 1;
  }

  #leaveHold(): void {
    this.#holding -= 1;
    if (this.#holding === 0) this.#released.resolve();
  }

  async #drain(): Promise<void> {
    if (this.#inFlight === 0) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        this.#drained = resolve;
        timer = setTimeout(
          () => reject(new NodeUnreachable(`requests still running after ${this.#drainMs} ms`)),
          this.#drainMs,
        );
      });
    } finally {
      clearTimeout(timer);
      this.#drained = undefined;
    }
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void this.#forward(req, res, Buffer.concat(chunks)).catch(() => res.destroy());
    });
  }

  async #forward(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): Promise<void> {
    while (this.#refusal === undefined && this.#holding > 0) await this.#released.promise;
    if (this.#refusal !== undefined) {
      answer(res, 503, errorBody(this.#refusal));
      return;
    }
    const intercepted = this.intercept(body);
    if (intercepted !== undefined) {
      answer(res, 200, await intercepted.catch((err: Error) => errorBody(err.message)));
      return;
    }
    if (res.destroyed) return;
    this.#inFlight += 1;
    let left = false;
    const leave = (): void => {
      if (left) return;
      left = true;
      this.#inFlight -= 1;
      if (this.#inFlight === 0) this.#drained?.();
    };
    const headers: http.OutgoingHttpHeaders = { 'content-length': body.length };
    if (req.headers['content-type'] !== undefined) headers['content-type'] = req.headers['content-type'];
    const upstream = http.request(
      {
        protocol: this.#target.protocol,
        hostname: this.#target.hostname,
        port: this.#target.port,
        method: req.method,
        path: req.url,
        headers,
        agent: this.#agent,
      },
      (reply) => {
        const head: http.OutgoingHttpHeaders = {};
        for (const name of ['content-type', 'content-length'] as const) {
          if (reply.headers[name] !== undefined) head[name] = reply.headers[name];
        }
        res.writeHead(reply.statusCode ?? 502, head);
        reply.pipe(res);
        reply.on('end', () => {
          leave();
          if (body.includes('eth_sendRawTransaction') || body.includes('eth_sendTransaction')) this.onTransaction();
        });
        reply.on('error', () => {
          leave();
          res.destroy();
        });
      },
    );
    upstream.on('error', (err) => {
      leave();
      if (res.headersSent) res.destroy();
      else answer(res, 502, errorBody(`devnet node unreachable: ${err.message}`));
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
      leave();
    });
    upstream.end(body);
  }
}

function errorBody(message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } });
}

function answer(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function pending(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

function settled(): { promise: Promise<void>; resolve: () => void } {
  return { promise: Promise.resolve(), resolve: () => undefined };
}
