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
