/**
 * Looking at the devnet's nodes as one chain, for the replication tests: plain JSON-RPC calls straight
 * at a node, bounded waiting on a condition, and `oneChain`, which waits (bounded) until the given nodes
 * report the same latest block and then compares their block hashes at every height.
 */
import assert from 'node:assert/strict';
import { post, type RpcAnswer } from './http.js';

/** anvil's well-known development keys #4 … #9 (accounts #2 and #3 are used by other devnet tests). */
export const DEV_KEYS = [
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e',
  '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356',
  '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97',
  '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6',
] as const;

export async function call<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const answer = (await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }))).json<RpcAnswer>();
  if (answer.error) throw new Error(`${method} at ${url}: ${answer.error.message}`);
  return answer.result as T;
}

export async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Block {
  number: string;
  hash: string;
  transactions: string[];
}

export interface Chain {
  readonly height: number;
  readonly hashes: readonly string[];
  /** Every transaction hash of blocks 1…height, in chain order. */
  readonly txs: readonly string[];
}

/**
 * Waits until every node's latest block is the same block, then asserts that the nodes report the same
 * hash at every height from 0 up, and returns the chain.
 */
export async function oneChain(urls: readonly string[], timeoutMs = 15_000): Promise<Chain> {
  let latest: Block[] = [];
  await waitFor(
    async () => {
      latest = await Promise.all(urls.map((url) => call<Block>(url, 'eth_getBlockByNumber', ['latest', false])));
      return new Set(latest.map((block) => block.hash)).size === 1;
    },
    `nodes reporting one latest block (now ${latest.map((b) => `${Number(b.number)}:${b.hash.slice(0, 10)}`)})`,
    timeoutMs,
  );
  const height = Number(latest[0]?.number);
  const hashes: string[] = [];
  const txs: string[] = [];
  for (let n = 0; n <= height; n += 1) {
    const blocks = await Promise.all(
      urls.map((url) => call<Block>(url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])),
    );
    assert.equal(new Set(blocks.map((block) => block.hash)).size, 1, `block ${n}: ${blocks.map((b) => b.hash)}`);
    hashes.push((blocks[0] as Block).hash);
    txs.push(...(n === 0 ? [] : (blocks[0] as Block).transactions));
  }
  return { height, hashes, txs };
}

/** Asserts that each of `sent` is in the chain exactly once (and the chain has nothing else). */
export function assertEachOnce(chain: Chain, sent: readonly string[]): void {
  const counts = new Map<string, number>();
  for (const hash of chain.txs) counts.set(hash.toLowerCase(), (counts.get(hash.toLowerCase()) ?? 0) + 1);
  for (const hash of sent) assert.equal(counts.get(hash.toLowerCase()), 1, `transaction ${hash} mined exactly once`);
  assert.equal(chain.txs.length, new Set(sent.map((hash) => hash.toLowerCase())).size, 'no other transaction mined');
}
