/**
 * The address clients use for one devnet node (with more than one node): a small HTTP proxy in front of
 * the node's anvil, on `devnet.base_port + i` (the anvil itself listens on a free port of 127.0.0.1). It
 * forwards every request unchanged and adds three things the replicator needs:
 *
 * - a gate: `exclusive(work)` holds new client requests, waits for those in flight (at most `drainMs`,
 *   default 1000 ms, else it throws `NodeUnreachable`), runs `work` — a block replay, a rollback — and
 *   lets the held requests through. So no client sees the moments inside a replay (a transaction taken
 *   out of the pool, a block undone) and no client transaction slips into a replayed block;
 * - a refusal: while a node that was lost (or was the leader before a failover) catches up, requests are
 *   answered HTTP 503 with a JSON-RPC error, so the gateway's monitor keeps it Unhealthy until it is one
 *   chain with the others again;
 * - a signal: after a request naming eth_sendRawTransaction is answered, `onTransaction` runs (the
 *   replicator starts a round at once instead of at its next poll).
 *
 * When the anvil process exits, `close()` stops listening, so clients get "connection refused" as they
 * would from the dead node itself. Bodies are buffered (JSON-RPC requests are small); no timeout is added
 * (the client's own applies).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeUnreachable } from './node-rpc.js';

export interface NodeGate {
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  refuse(message: string): void;
  accept(): void;
  readonly refusing: boolean;
}

export interface NodeProxyOptions {
  host: string;
  /** 0 = a free port. */
  port: number;
  /** The anvil's own URL. */
  target: string;
  onTransaction?: () => void;
  drainMs?: number;
}

export class NodeProxy implements NodeGate {
  readonly url: string;
  readonly port: number;
  readonly #server: http.Server;
  readonly #agent = new http.Agent({ keepAlive: true });
  readonly #target: URL;
  readonly #drainMs: number;
  #onTransaction: () => void;
  #inFlight = 0;
  #drained: (() => void) | undefined;
  /** Set while `exclusive` work runs; requests wait for it. */
  #held: Promise<void> | undefined;
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
    this.#onTransaction = options.onTransaction ?? (() => undefined);
    this.port = (server.address() as AddressInfo).port;
    this.url = `http://${options.host}:${this.port}`;
    server.on('request', (req, res) => this.#handle(req, res));
  }

  set onTransaction(listener: () => void) {
    this.#onTransaction = listener;
  }

  get refusing(): boolean {
    return this.#refusal !== undefined;
  }

  refuse(message: string): void {
    this.#refusal = message;
  }

  accept(): void {
    this.#refusal = undefined;
  }

  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    while (this.#held !== undefined) await this.#held;
    let release: () => void = () => undefined;
    this.#held = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      await this.#drain();
      return await work();
    } finally {
      this.#held = undefined;
      release();
    }
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
    if (this.#refusal === undefined) while (this.#held !== undefined) await this.#held;
    if (this.#refusal !== undefined) {
      answerError(res, 503, this.#refusal);
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
      (answer) => {
        const head: http.OutgoingHttpHeaders = {};
        for (const name of ['content-type', 'content-length'] as const) {
          if (answer.headers[name] !== undefined) head[name] = answer.headers[name];
        }
        res.writeHead(answer.statusCode ?? 502, head);
        answer.pipe(res);
        answer.on('end', () => {
          leave();
          if (body.includes('eth_sendRawTransaction')) this.#onTransaction();
        });
        answer.on('error', () => {
          leave();
          res.destroy();
        });
      },
    );
    upstream.on('error', (err) => {
      leave();
      if (res.headersSent) res.destroy();
      else answerError(res, 502, `devnet node unreachable: ${err.message}`);
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
      leave();
    });
    upstream.end(body);
  }
}

function answerError(res: http.ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
