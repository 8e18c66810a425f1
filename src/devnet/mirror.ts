/**
 * Keeps the devnet's anvil nodes in step. The nodes are independent chains sharing a genesis block; a
 * transaction the gateway sends to one node would be invisible on the others (and their heights would
 * drift apart until the JSON-RPC monitor calls the laggard unhealthy). The mirror watches every node for
 * new blocks (eth_blockNumber every `intervalMs`, default 100 ms) and re-sends each new transaction's raw
 * bytes (eth_getRawTransactionByHash) to the other nodes, which mine it in their own block. Balances,
 * nonces, receipts and block numbers then agree within about one interval; block hashes differ
 * (timestamps). A transaction is mirrored once (hashes remembered, at most 100 000).
 *
 * Limits, acceptable for a demo chain: reads in the first ~100 ms after a write may hit a node that has not
 * seen it yet, and two conflicting transactions (same sender and nonce) sent to different nodes at once
 * leave the nodes disagreeing. Empty blocks mined on one node (anvil_mine) are not mirrored.
 */
import type { Logger } from '../log.js';

const MAX_SEEN = 100_000;

export class TransactionMirror {
  readonly #urls: readonly string[];
  readonly #logger: Logger;
  readonly #intervalMs: number;
  readonly #heights: number[];
  readonly #seen = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(urls: readonly string[], logger: Logger, intervalMs = 100) {
    this.#urls = urls;
    this.#logger = logger;
    this.#intervalMs = intervalMs;
    this.#heights = urls.map(() => 0);
  }

  /** Starts watching from the nodes' current heights. */
  async start(): Promise<void> {
    for (const [i, url] of this.#urls.entries()) this.#heights[i] = Number(await rpc(url, 'eth_blockNumber', []));
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#tick()
        .catch((err: unknown) => this.#logger.debug('devnet mirror round failed', { err }))
        .finally(() => this.#schedule());
    }, this.#intervalMs);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    for (const [i, url] of this.#urls.entries()) {
      if (this.#stopped) return;
      const height = Number(await rpc(url, 'eth_blockNumber', []));
      for (let n = (this.#heights[i] as number) + 1; n <= height; n += 1) {
        const block = (await rpc(url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])) as {
          transactions?: string[];
        } | null;
        for (const hash of block?.transactions ?? []) await this.#mirror(hash, i);
      }
      this.#heights[i] = Math.max(this.#heights[i] as number, height);
    }
  }

  async #mirror(hash: string, from: number): Promise<void> {
    if (this.#seen.has(hash)) return;
    this.#seen.add(hash);
    if (this.#seen.size > MAX_SEEN) this.#seen.delete(this.#seen.values().next().value as string);
    const raw = await rpc(this.#urls[from] as string, 'eth_getRawTransactionByHash', [hash]);
    if (typeof raw !== 'string') return;
    await Promise.all(
      this.#urls.map(async (url, j) => {
        if (j === from) return;
        try {
          await rpc(url, 'eth_sendRawTransaction', [raw]);
        } catch (err) {
          this.#logger.debug('devnet mirror: node refused a transaction', { hash, node: j, err });
        }
      }),
    );
  }
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(5000),
  });
  const answer = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result;
}
