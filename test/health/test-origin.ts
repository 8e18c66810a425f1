/**
 * A real local origin for health tests: a `node:http` server on 127.0.0.1 port 0 whose behaviour a test
 * sets between checks. GET/other requests answer `status` + `body` (with `location` set, every other
 * path is a 302 to it); JSON-RPC POSTs answer eth_chainId,
 * eth_syncing and eth_blockNumber, and with `headers` eth_getBlockByNumber (anything else: `null`). `down()` closes the listener (connections are
 * refused), `up()` listens again on the same port; `hang` accepts and never answers (a timeout).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface OriginBehaviour {
  status: number;
  body: string;
  hang: boolean;
  location?: string;
  chainId: string;
  syncing: unknown;
  block: bigint;
  /** Answers every JSON-RPC call with this HTTP status instead. */
  rpcStatus?: number;
  /** Delays every answer by this many ms (a slow origin). */
  delayMs?: number;
  /** JSON-RPC methods that are accepted and never answered (a call too slow for the gateway). */
  hangMethods?: string[];
  /**
   * Answers eth_getBlockByNumber with headers of one chain up to `block` (the same at every origin), so
   * the gateway's chain tracker knows this origin's head. Without it the answer is `null`, and the
   * tracker learns the head only from the origin's eth_blockNumber answers.
   */
  headers?: boolean;
}

export class TestOrigin {
  readonly behaviour: OriginBehaviour = {
    status: 200,
    body: 'ok',
    hang: false,
    chainId: '0xaa36a7',
    syncing: false,
    block: 100n,
  };
  requests: Array<{ method: string; url: string; headers: IncomingMessage['headers']; rpc?: string }> = [];
  #server: Server;
  #sockets = new Set<Socket>();
  #port = 0;

  private constructor() {
    this.#server = this.#create();
  }

  static async start(): Promise<TestOrigin> {
    const origin = new TestOrigin();
    await origin.up();
    return origin;
  }

  get port(): number {
    return this.#port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}/`;
  }

  async up(): Promise<void> {
    if (this.#server.listening) return;
    this.#server = this.#create();
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  async down(): Promise<void> {
    if (!this.#server.listening) return;
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  /** Sets several behaviour fields at once and resets the others to their defaults. */
  set(change: Partial<OriginBehaviour>): void {
    Object.assign(
      this.behaviour,
      { status: 200, body: 'ok', hang: false, chainId: '0xaa36a7', syncing: false },
      change,
    );
    if (!('location' in change)) delete this.behaviour.location;
    if (!('rpcStatus' in change)) delete this.behaviour.rpcStatus;
    if (!('delayMs' in change)) delete this.behaviour.delayMs;
    if (!('hangMethods' in change)) delete this.behaviour.hangMethods;
  }

  #create(): Server {
    const server = createServer((req, res) => this.#handle(req, res));
    server.keepAliveTimeout = 1_000;
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    return server;
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const b = this.behaviour;
      const text = Buffer.concat(chunks).toString('utf8');
      let rpc: { method?: string; id?: unknown; params?: unknown } | undefined;
      if (req.method === 'POST' && text.startsWith('{'))
        rpc = JSON.parse(text) as { method?: string; id?: unknown; params?: unknown };
      this.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        ...(rpc?.method ? { rpc: rpc.method } : {}),
      });
      if (b.hang) return; // never answer: the monitor's timeout fires
      if (rpc?.method !== undefined && b.hangMethods?.includes(rpc.method)) return;
      if (b.delayMs !== undefined) {
        setTimeout(() => this.#answer(req, res, rpc), b.delayMs);
        return;
      }
      this.#answer(req, res, rpc);
    });
  }

  #answer(
    req: IncomingMessage,
    res: ServerResponse,
    rpc: { method?: string; id?: unknown; params?: unknown } | undefined,
  ): void {
    const b = this.behaviour;
    if (rpc !== undefined && rpc.method === 'eth_getBlockByNumber' && b.headers === true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id ?? null, result: headerAt(rpc.params, b.block) }));
      return;
    }
    if (rpc !== undefined) {
      if (b.rpcStatus !== undefined) {
        res.writeHead(b.rpcStatus).end('upstream error');
        return;
      }
      const result =
        rpc.method === 'eth_chainId'
          ? b.chainId
          : rpc.method === 'eth_syncing'
            ? b.syncing
            : rpc.method === 'eth_blockNumber'
              ? `0x${b.block.toString(16)}`
              : null;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id ?? null, result }));
      return;
    }
    if (b.location !== undefined && req.url !== b.location) {
      res.writeHead(302, { location: b.location }).end();
      return;
    }
    res.writeHead(b.status).end(b.body);
  }
}

/** The header eth_getBlockByNumber asks for (a tag is the head `block`), or null past the head. */
function headerAt(params: unknown, block: bigint): unknown {
  const which = Array.isArray(params) ? params[0] : undefined;
  const number = typeof which === 'string' && which.startsWith('0x') ? BigInt(which) : block;
  if (number > block || number < 0n) return null;
  const hash = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;
  return {
    number: `0x${number.toString(16)}`,
    hash: hash(number + 1n),
    parentHash: hash(number),
    timestamp: `0x${(number * 12n).toString(16)}`,
  };
}
