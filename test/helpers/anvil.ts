/**
 * Real anvil nodes for tests, through the product's own launcher (src/devnet/anvil.ts): free port,
 * chain id 11155111 unless told otherwise, genesis at TEST_GENESIS (so test nodes share block 0), stopped
 * by PID. Register `after(() => node.stop())`. `mineShared` keeps several such nodes on one chain.
 */
import { readFileSync } from 'node:fs';
import { type AnvilNode, type AnvilOptions, startAnvil } from '../../src/devnet/anvil.js';
import { rpc } from './http.js';

export type { AnvilNode };

export const TEST_GENESIS = 1_700_000_000;

export function startTestAnvil(options: Partial<AnvilOptions> = {}): Promise<AnvilNode> {
  return startAnvil({ chainId: 11_155_111, port: 0, timestamp: TEST_GENESIS, ...options });
}

/**
 * Mines empty blocks on `node` up to height `to`, block n stamped TEST_GENESIS + n. Test nodes that mine
 * the same heights this way mine the very same blocks (same parent, timestamp and contents), so they stay
 * on one chain whichever of them is ahead — as nodes of one real network do.
 */
export async function mineShared(node: AnvilNode, to: number): Promise<void> {
  const answer = await rpc(node.url, 'eth_blockNumber');
  for (let n = Number(answer.answer.result) + 1; n <= to; n += 1) {
    const mined = await rpc(node.url, 'evm_mine', [TEST_GENESIS + n]);
    if (mined.answer.error !== undefined) throw new Error(`evm_mine ${n}: ${mined.answer.error.message}`);
  }
}

/**
 * True while a process with this PID runs. A zombie (exited, not yet reaped by its new parent) counts as
 * gone: it holds no port and no memory, and `kill -0` would still succeed on it.
 */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Waits (bounded) until none of the PIDs exists any more; returns those still alive at the deadline. */
export async function waitForPidsGone(pids: readonly number[], timeoutMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(isPidAlive);
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What `transactAt` resolves: the receipt's fields tests read. */
export interface MinedReceipt {
  readonly blockNumber: string;
  readonly blockHash: string;
  readonly transactionHash: string;
  readonly contractAddress: string | null;
}

/**
 * Sends `eth_sendTransaction` from an unlocked account straight at an anvil node (anvil mines it in its
 * own block) and resolves its receipt, read from the node (polled every 5 ms, at most 10 s).
 */
export async function transactAt(
  url: string,
  tx: { from: string; to?: string | undefined; data: string },
): Promise<MinedReceipt> {
  const call = async (method: string, params: unknown[]) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const answer = (await res.json()) as { result?: unknown; error?: unknown };
    if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result;
  };
  const hash = await call('eth_sendTransaction', [tx.to === undefined ? { from: tx.from, data: tx.data } : tx]);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const receipt = await call('eth_getTransactionReceipt', [hash]);
    if (receipt !== null && receipt !== undefined) return receipt as MinedReceipt;
    if (Date.now() > deadline) throw new Error(`no receipt for ${String(hash)} within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
