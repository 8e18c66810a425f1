/**
 * The origin of the fan-out leg: a tiny Ethereum node on 127.0.0.1 whose chain moves only when the
 * benchmark says so, so a new head enters the gateway at an instant the benchmark knows.
 *
 * - JSON-RPC over HTTP POST (single calls and batches), each answer echoing the request's id:
 *   `eth_blockNumber`, `eth_getBlockByNumber` (a tag or a number; above the head: null),
 *   `eth_getBlockByHash`, `eth_chainId`, `net_version`, `eth_syncing` (false); anything else -32601.
 *   Switchyard's chain tracker polls the head here once at start and asks eth_syncing.
 * - The same port speaks WebSocket (the origin's `ws_address`): `eth_subscribe(["newHeads"])` answers a
 *   subscription id and from then on every new head is pushed as an `eth_subscription` notification;
 *   `eth_unsubscribe` answers true.
 * - Blocks are made up deterministically: block n's hash is sha256("block-n"), its parent's is n − 1's,
 *   and its header has every member a post-Cancun geth header has (with a 256-byte logsBloom, ~1.2 KB of
 *   JSON, the size a real newHeads notification has). The chain starts at FIRST_HEAD.
 * - `advance()` makes the next block the head and returns the exact notification text pushed to each
 *   subscriber (its `result` is the header as JSON, which Switchyard passes on member for member).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type WebSocket, WebSocketServer } from 'ws';

export const FIRST_HEAD = 20_000_000;
const GENESIS_TIME = 1_700_000_000;

const hex = (n: number): string => `0x${n.toString(16)}`;
const digest = (text: string): string => `0x${createHash('sha256').update(text).digest('hex')}`;

export function blockHash(n: number): string {
  return digest(`block-${n}`);
}

/** The header of block n, members in geth's order (newHeads carries these). */
export function header(n: number): Record<string, unknown> {
  const h = (what: string): string => digest(`${what}-${n}`);
  return {
    parentHash: blockHash(n - 1),
    sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347',
    miner: `0x${h('miner').slice(2, 42)}`,
    stateRoot: h('state'),
    transactionsRoot: h('transactions'),
    receiptsRoot: h('receipts'),
    logsBloom: `0x${h('bloom').slice(2).repeat(8)}`,
    difficulty: '0x0',
    number: hex(n),
    gasLimit: '0x1c9c380',
    gasUsed: hex(10_000_000 + (n % 5_000_000)),
    timestamp: hex(GENESIS_TIME + 12 * (n - FIRST_HEAD)),
    extraData: '0x6265617665726275696c642e6f7267',
    mixHash: h('mix'),
    nonce: '0x0000000000000000',
    baseFeePerGas: hex(1_000_000_000 + (n % 977)),
    withdrawalsRoot: h('withdrawals'),
    blobGasUsed: '0x0',
    excessBlobGas: '0x0',
    parentBeaconBlockRoot: h('beacon'),
    requestsHash: h('requests'),
    hash: blockHash(n),
  };
}

/** The block as eth_getBlockByNumber(…, false) answers it: the header plus the body's members. */
function block(n: number): Record<string, unknown> {
  return { ...header(n), size: '0x4d2', totalDifficulty: '0x0', transactions: [], uncles: [], withdrawals: [] };
}

interface Call {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

export class FanoutOrigin {
  #head = FIRST_HEAD;
  readonly #chainId: number;
  readonly #server: Server;
  readonly #wss: WebSocketServer;
  /** Subscribers of newHeads: socket → its subscription id. */
  readonly #subscribers = new Map<WebSocket, string>();
  #nextSubscription = 1;

  private constructor(chainId: number) {
    this.#chainId = chainId;
    this.#server = createServer((req, res) => this.#http(req, res));
    this.#wss = new WebSocketServer({ server: this.#server, perMessageDeflate: false });
    this.#wss.on('connection', (ws) => {
      ws.on('message', (data) => ws.send(this.#answerText(data.toString(), ws)));
      ws.on('close', () => this.#subscribers.delete(ws));
    });
  }

  static async start(port: number, chainId: number): Promise<FanoutOrigin> {
    const origin = new FanoutOrigin(chainId);
    await new Promise<void>((resolve, reject) => {
      origin.#server.once('error', reject);
      origin.#server.listen(port, '127.0.0.1', () => resolve());
    });
    return origin;
  }

  get head(): number {
    return this.#head;
  }

  /** newHeads subscriptions open now (the gateway's push connection). */
  get subscribers(): number {
    return this.#subscribers.size;
  }

  /**
   * The next block becomes the head: returns its header JSON and `push`, which sends the notification
   * to every subscriber (the caller takes the time right before calling it).
   */
  advance(): { number: number; headerJson: string; push: () => void } {
    this.#head += 1;
    const headerJson = JSON.stringify(header(this.#head));
    const frames = [...this.#subscribers].map(
      ([ws, id]) =>
        [
          ws,
          `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":${headerJson}}}`,
        ] as const,
    );
    return {
      number: this.#head,
      headerJson,
      push: () => {
        for (const [ws, text] of frames) ws.send(text);
      },
    };
  }

  close(): Promise<void> {
    for (const ws of this.#subscribers.keys()) ws.terminate();
    this.#wss.close();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #http(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = this.#answerText(Buffer.concat(chunks).toString());
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  }

  /** A JSON-RPC message (one call or a batch) → the answer's text. */
  #answerText(text: string, ws?: WebSocket): string {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}';
    }
    if (Array.isArray(parsed)) return JSON.stringify(parsed.map((call: Call) => this.#answer(call, ws)));
    return JSON.stringify(this.#answer(parsed as Call, ws));
  }

  #answer(call: Call, ws: WebSocket | undefined): Record<string, unknown> {
    const id = call.id ?? null;
    const params = Array.isArray(call.params) ? call.params : [];
    const result = (value: unknown): Record<string, unknown> => ({ jsonrpc: '2.0', id, result: value });
    switch (call.method) {
      case 'eth_blockNumber':
        return result(hex(this.#head));
      case 'eth_chainId':
        return result(hex(this.#chainId));
      case 'net_version':
        return result(String(this.#chainId));
      case 'eth_syncing':
        return result(false);
      case 'eth_getBlockByNumber': {
        const tag = params[0];
        const n = typeof tag === 'string' && tag.startsWith('0x') ? Number.parseInt(tag, 16) : this.#head;
        return result(n <= this.#head && n >= 0 ? block(n) : null);
      }
      case 'eth_getBlockByHash': {
        // Only the last few thousand blocks are looked for: the gateway asks for recent ones.
        for (let n = this.#head; n > this.#head - 4096; n--) if (blockHash(n) === params[0]) return result(block(n));
        return result(null);
      }
      case 'eth_subscribe':
        if (ws !== undefined && params[0] === 'newHeads') {
          const subscription = hex(this.#nextSubscription++);
          this.#subscribers.set(ws, subscription);
          return result(subscription);
        }
        break;
      case 'eth_unsubscribe':
        if (ws !== undefined) return result(this.#subscribers.delete(ws));
        break;
    }
    return { jsonrpc: '2.0', id, error: { code: -32601, message: `the bench origin does not serve ${call.method}` } };
  }
}
