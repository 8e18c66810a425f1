/**
 * A devnet node whose latest block is not on the leader's chain — it was the leader and mined a block the
 * others never got (it stopped right then), a user mined on it through anvil's own port, or the leader's
 * chain went back (evm_revert sent to the leader) — is brought back by the replicator in two steps:
 * - `forkPoint`: the highest block both share, searched downwards 16 blocks per request, at most
 *   `MAX_REWIND` (1024) blocks deep (deeper is reported, not repaired);
 * - `rollBack`: its blocks past the fork are undone (anvil_rollback) behind its gate, and the transactions
 *   of those the caller keeps (blocks only this node had) put back in its pool; the caller hands them to
 *   the leader too, so none is lost. Blocks the leader itself took back (evm_revert) keep nothing.
 */
import type { NodeGate } from './node-proxy.js';
import type { NodeRpc } from './node-rpc.js';
import { type ChainBlock, hex, type NodeHead, type RawTransactions, readBlock, sendAll } from './replay.js';

export const MAX_REWIND = 1024;
const WINDOW = 16;

interface GatedNode {
  readonly rpc: NodeRpc;
  readonly gate: NodeGate;
}

/** The highest block at or below `from` that `node` and `leader` share; undefined past MAX_REWIND. */
export async function forkPoint(node: NodeRpc, leader: NodeRpc, from: number): Promise<NodeHead | undefined> {
  for (let top = from; top >= 0 && from - top < MAX_REWIND; top -= WINDOW) {
    const numbers = Array.from({ length: Math.min(WINDOW, top + 1) }, (_, i) => top - i);
    const calls = numbers.map((n) => ['eth_getBlockByNumber', [hex(n), false]] as const);
    const [mine, theirs] = await Promise.all([node.batch(calls), leader.batch(calls)]);
    for (const [i, n] of numbers.entries()) {
      const a = mine[i];
      const b = theirs[i];
      const hash = a?.ok ? (a.result as NodeHead | null)?.hash : undefined;
      if (hash !== undefined && b?.ok && (b.result as NodeHead | null)?.hash === hash) return { number: n, hash };
    }
  }
  return undefined;
}

/** Blocks `from`…`to` of `node`, with their transactions' bytes. */
export async function readBlocks(node: NodeRpc, from: number, to: number, raws: RawTransactions) {
  const blocks: ChainBlock[] = [];
  for (let n = from; n <= to; n += 1) {
    const block = await readBlock(node, n, raws);
    if (block !== null) blocks.push(block);
  }
  return blocks;
}

/** Rolls `node` back from `height` to `fork` and puts the transactions of `keep` back in its pool. */
export async function rollBack(node: GatedNode, fork: NodeHead, height: number, keep: readonly ChainBlock[]) {
  await node.gate.exclusive(async () => {
    if (height > fork.number) await node.rpc.call('anvil_rollback', [height - fork.number]);
    await sendAll(
      node.rpc,
      keep.flatMap((block) => block.txs),
    );
  });
}
