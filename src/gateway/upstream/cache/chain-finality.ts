/**
 * The response cache's finality comes from the chain tracker (src/chain/, SPEC §9 "one tracker"): this
 * connects a FinalityTracker to it.
 * - The chain tracker's `finalized` events (it fetches `eth_getBlockByNumber("finalized", false)` while the
 *   network is in use) feed `FinalityTracker.observe`.
 * - `FinalityTracker.touch` (reads that depend on finality) marks the network in use in the chain tracker.
 * - The FinalityTracker's own lookups (a block by height during a conflict search, the finalized block
 *   after a conflict) go through the chain tracker's network-wide lookup: the best usable origins.
 */
import type { BlockHead, ChainListener } from '../../../chain/types.js';
import type { Logger } from '../../../log.js';
import { type BlockSource, FinalityTracker, type FinalizedBlock } from './finality.js';

/** What the response cache needs of the chain tracker (chain/tracker.ts ChainTracker has it). */
export interface ChainBlocks {
  block(network: string, which: 'finalized' | number): Promise<BlockHead | undefined>;
  touch(network: string): void;
  addListener(listener: ChainListener): () => void;
  /** The canonical block's hash at a height, while the tracker's window holds it (what may be cached). */
  canonicalHash(network: string, number: number): string | undefined;
}

/** A FinalityTracker fed by the chain tracker; `close` stops the feed. */
export function finalityFromChain(
  chain: ChainBlocks,
  logger?: Logger,
): { readonly finality: FinalityTracker; close(): void } {
  const finality = new FinalityTracker({
    source: chainBlockSource(chain),
    demand: (network) => chain.touch(network),
    ...(logger === undefined ? {} : { logger }),
  });
  const close = chain.addListener({
    finalized: (network, block) => void finality.observe(network, finalizedOf(block)),
  });
  return { finality, close };
}

export function chainBlockSource(chain: ChainBlocks): BlockSource {
  return async (network, which) => {
    const block = await chain.block(network, which === 'finalized' ? 'finalized' : Number(which));
    return block === undefined ? undefined : finalizedOf(block);
  };
}

function finalizedOf(block: BlockHead): FinalizedBlock {
  return { number: BigInt(block.number), hash: block.hash };
}
