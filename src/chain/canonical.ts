/**
 * One network's canonical chain: a window of its most recent blocks (CANONICAL_WINDOW, 128), contiguous
 * by number and linked by parentHash, and the events that move it (types.ts ChainListener).
 *
 * `follow(target, fetch, mayReplace)` moves the chain to `target`, a header one origin showed, reading
 * any other block it needs from that same origin by number (`fetch`):
 * - empty chain → `target` is the first head;
 * - `target` above the tip → the blocks between are back-filled by number (at most 8 at once), checked
 *   to link by parentHash, and emitted in order; a gap wider than the window is not back-filled: a `gap`
 *   event names the skipped numbers and the chain restarts with the last window of blocks up to `target`;
 * - `target`'s chain does not link to ours (another block at a height we hold) → a reorg: walking down
 *   the origin's chain by number until a parent matches ours finds the fork point (the first number that
 *   changed); listeners get `reorg` with the removed blocks, then the new branch's heads from the fork
 *   point on (as geth's newHeads). A walk that runs out of window is reported with `beyondWindow`.
 * - `target` at or below the tip on our chain changes nothing; so does one below the window, unless the
 *   origin's block 0 is not ours: its chain was restarted or reset (a devnet node, `anvil_reset`), and the
 *   chain starts again on it — `reorg` from block 0 with the whole window removed (`beyondWindow`), then
 *   its heads (at most a window of them, up to `target`). Block 0's hash (`#genesis`) is learned from the
 *   origin that starts the chain, and again whenever a replacement reaches below the window; unknown (the
 *   origin would not give block 0), a head below the window changes nothing.
 * Replacing blocks (reorg, gap restart) needs `mayReplace`: the network decides which origin may do that
 * (adoption.ts: the leader, and only when another origin backs it), asked only when a replacement is
 * needed; any origin may extend the chain with blocks that link. Whether an origin may start an empty
 * chain, and how far ahead an extension may reach, is the network's to judge before calling `follow`.
 *
 * An origin whose chain changes while it is being read (a parent that is not the block's parent, a block
 * that vanished) fails the step ('failed'): nothing is emitted and the next round tries again. The caller
 * runs one `follow` at a time per network, so events are in order.
 */
import type { BlockHead, ChainReorg } from './types.js';

export const CANONICAL_WINDOW = 128;
/** Blocks fetched at once while back-filling. */
const FETCH_CONCURRENCY = 8;

export type BlockFetch = (number: number) => Promise<BlockHead | undefined>;

export interface CanonicalEvents {
  head(block: BlockHead): void;
  reorg(reorg: ChainReorg): void;
  gap(from: number, to: number): void;
}

export type FollowOutcome = 'unchanged' | 'extended' | 'reorged' | 'refused' | 'failed';

/**
 * Whether the origin may replace blocks: a constant, or asked only when a replacement is needed (the
 * network's rule may have to ask other origins: network-chain.ts).
 */
export type MayReplace = boolean | (() => Promise<boolean>);

export class CanonicalChain {
  readonly #window: number;
  readonly #events: CanonicalEvents;
  /** Ascending, contiguous, each block's parentHash the previous block's hash; at most #window long. */
  #blocks: BlockHead[] = [];
  /** The hash of block 0 of the chain held, when known. */
  #genesis: string | undefined;
  /** The last head below the window found to be on our chain (not asked about again). */
  #oldNews: string | undefined;

  constructor(events: CanonicalEvents, window = CANONICAL_WINDOW) {
    this.#events = events;
    this.#window = window;
  }

  get tip(): BlockHead | undefined {
    return this.#blocks[this.#blocks.length - 1];
  }

  /** The canonical block at `number`, while it is in the window. */
  at(number: number): BlockHead | undefined {
    const low = this.#blocks[0];
    if (low === undefined || number < low.number) return undefined;
    return this.#blocks[number - low.number];
  }

  /** The window, oldest first (a copy). */
  blocks(): BlockHead[] {
    return [...this.#blocks];
  }

  async follow(target: BlockHead, fetch: BlockFetch, may: MayReplace): Promise<FollowOutcome> {
    const mayReplace = typeof may === 'boolean' ? async () => may : may;
    const tip = this.tip;
    if (tip === undefined) {
      this.#append([target]);
      await this.#learnGenesis(target, fetch);
      return 'extended';
    }
    if (target.number <= tip.number) {
      const ours = this.at(target.number);
      // Below the window: old news from an origin behind us, or the first head of a restarted chain.
      if (ours === undefined) return (await mayReplace()) ? this.#restartIfNew(target, fetch) : 'unchanged';
      if (ours.hash === target.hash) return 'unchanged';
      return (await mayReplace()) ? this.#reorg([target], fetch) : 'refused';
    }
    const wide = target.number - tip.number > this.#window;
    if (wide && !(await mayReplace())) return 'refused';
    const from = wide ? target.number - this.#window + 1 : tip.number + 1;
    const segment = await linkedUpTo(from, target, fetch);
    if (segment === undefined) return 'failed';
    if (wide) {
      this.#events.gap(tip.number + 1, from - 1);
      this.#blocks = [];
      this.#append(segment);
      await this.#learnGenesis(segment[0] as BlockHead, fetch);
      return 'extended';
    }
    if (segment[0]?.parentHash === tip.hash) {
      this.#append(segment);
      return 'extended';
    }
    return (await mayReplace()) ? this.#reorg(segment, fetch) : 'refused';
  }

  /**
   * `segment` (ascending, linked) ends on the origin's chain and its lowest block differs from ours or
   * lies above our tip: walk down until a parent is ours.
   */
  async #reorg(segment: BlockHead[], fetch: BlockFetch): Promise<FollowOutcome> {
    const low = this.#blocks[0]?.number ?? 0;
    let beyondWindow = false;
    for (;;) {
      const lowest = segment[0] as BlockHead;
      const parent = lowest.number - 1;
      if (parent < low) {
        // Nothing of ours left to compare with: the fork is at or below the window's first block.
        beyondWindow = parent >= 0;
        break;
      }
      if (this.at(parent)?.hash === lowest.parentHash) break;
      const block = await fetch(parent);
      if (block === undefined || block.number !== parent || block.hash !== lowest.parentHash) return 'failed';
      segment.unshift(block);
    }
    const forkPoint = (segment[0] as BlockHead).number;
    const keep = Math.max(0, forkPoint - low);
    const removed = this.#blocks.slice(keep);
    this.#blocks = this.#blocks.slice(0, keep);
    this.#events.reorg({ forkPoint, removed, beyondWindow });
    this.#append(segment);
    if (beyondWindow || forkPoint === 0) await this.#learnGenesis(segment[0] as BlockHead, fetch);
    return 'reorged';
  }

  /**
   * `target`, from the origin that may replace blocks, lies below the window. When that origin's block 0
   * is not ours, its chain was restarted: start again on it, from block 0 (see the header).
   */
  async #restartIfNew(target: BlockHead, fetch: BlockFetch): Promise<FollowOutcome> {
    const genesis = this.#genesis;
    if (genesis === undefined || target.hash === this.#oldNews) return 'unchanged';
    const theirs = target.number === 0 ? target : await fetch(0);
    if (theirs === undefined || theirs.number !== 0) return 'failed';
    if (theirs.hash === genesis) {
      this.#oldNews = target.hash;
      return 'unchanged';
    }
    const from = Math.max(0, target.number - this.#window + 1);
    const segment = await linkedUpTo(from, target, fetch);
    if (segment === undefined || (from === 0 && segment[0]?.hash !== theirs.hash)) return 'failed';
    const removed = this.#blocks;
    this.#blocks = [];
    this.#genesis = theirs.hash;
    this.#events.reorg({ forkPoint: 0, removed, beyondWindow: true });
    this.#append(segment);
    return 'reorged';
  }

  /** Learns block 0's hash of the chain that now starts at `lowest`, from the origin it came from. */
  async #learnGenesis(lowest: BlockHead, fetch: BlockFetch): Promise<void> {
    this.#genesis = undefined;
    if (lowest.number === 0) {
      this.#genesis = lowest.hash;
      return;
    }
    try {
      const block = await fetch(0);
      if (block?.number === 0) this.#genesis = block.hash;
    } catch {
      // Unknown: a restart below the window then goes unnoticed, as if this were an old head.
    }
  }

  #append(blocks: readonly BlockHead[]): void {
    for (const block of blocks) {
      this.#blocks.push(block);
      if (this.#blocks.length > this.#window) this.#blocks.shift();
      this.#events.head(block);
    }
  }
}

/**
 * Blocks from..`target` (`target` itself as given), linked by parentHash; undefined when the origin lacks
 * one of them or they do not link (its chain changed while it was read).
 */
async function linkedUpTo(from: number, target: BlockHead, fetch: BlockFetch): Promise<BlockHead[] | undefined> {
  const between = await fetchRange(from, target.number - 1, fetch);
  if (between === undefined) return undefined;
  const segment = [...between, target];
  return linked(segment) ? segment : undefined;
}

/** Blocks from..to by number (empty when from > to); undefined when the origin lacks one of them. */
async function fetchRange(from: number, to: number, fetch: BlockFetch): Promise<BlockHead[] | undefined> {
  const out: BlockHead[] = [];
  for (let start = from; start <= to; start += FETCH_CONCURRENCY) {
    const numbers: number[] = [];
    for (let n = start; n <= Math.min(to, start + FETCH_CONCURRENCY - 1); n++) numbers.push(n);
    const blocks = await Promise.all(numbers.map(fetch));
    for (const [i, block] of blocks.entries()) {
      if (block === undefined || block.number !== numbers[i]) return undefined;
      out.push(block);
    }
  }
  return out;
}

function linked(segment: readonly BlockHead[]): boolean {
  for (let i = 1; i < segment.length; i++) {
    if ((segment[i] as BlockHead).parentHash !== (segment[i - 1] as BlockHead).hash) return false;
  }
  return true;
}
