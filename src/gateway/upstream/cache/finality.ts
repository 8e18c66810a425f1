/**
 * Tracks each network's finalized block, which decides what the response cache may keep by number,
 * and notices when blocks that were final change (a reorg past finality, an origin on another chain,
 * a restarted devnet).
 *
 * Where finalized blocks come from: the chain tracker (src/chain/), which fetches
 * `eth_getBlockByNumber("finalized", false)` from the network's best usable origin while the network is
 * in use and hands each answer to `observe` (wired by chain-finality.ts). This tracker has no timer and
 * asks nothing on its own schedule:
 * - `touch(network)` (the cache calls it for reads that depend on finality) tells the chain tracker the
 *   network is in use (`demand`): it fetches at once while nothing is known, then every 12 s until the
 *   network has been idle for 5 minutes (chain/network-chain.ts);
 * - its own lookups — a block by height while checking a conflict, the finalized block after one, or
 *   `refresh` — go through `source` (the chain tracker's network-wide block lookup).
 * A chain without the `finalized` tag (pre-merge, some L2s) never reports one: its finalized height stays
 * unknown, and blocks by number are never cached there. One check in flight per network; an observation
 * arriving meanwhile is dropped (the next one comes a round later); failures are logged at debug.
 *
 * Finality only moves up, unless the chain proves otherwise
 * - The last `HISTORY` (256) finalized height → hash pairs seen are remembered.
 * - A higher finalized block is taken as is. A lower one usually means a lagging origin: the block at
 *   our finalized height is fetched once and compared; if it is missing or has another hash, the
 *   chain changed under us.
 * - A remembered height that now has another hash (or the cache reporting a conflict through
 *   `reportConflict`) is a change at or below that height. Listeners get `reorg(network, H)` at once,
 *   then the divergence point is searched (binary search over the remembered heights below H, at most
 *   ~8 block fetches): listeners get `reorg(network, L)` with L the first height that differs (0 when
 *   no remembered block still matches). The finalized block becomes the new chain's.
 */
import type { Logger } from '../../../log.js';

const HISTORY = 256; // remembered finalized heights per network

export interface FinalizedBlock {
  number: bigint;
  hash: string;
}

/**
 * Fetches one block header of a network: its finalized block, or the block at a height. Undefined when
 * the network has no such block (null result, or the tag is not supported).
 */
export type BlockSource = (network: string, which: 'finalized' | bigint) => Promise<FinalizedBlock | undefined>;

export interface FinalityListener {
  observed?(network: string, block: FinalizedBlock): void;
  reorg?(network: string, height: bigint): void;
}

interface NetworkState {
  finalized?: FinalizedBlock;
  /** height (decimal string) → hash, insertion-ordered, at most HISTORY entries */
  history: Map<string, string>;
  polling?: Promise<void>;
}

export class FinalityTracker {
  readonly #source: BlockSource;
  readonly #demand: ((network: string) => void) | undefined;
  readonly #logger: Logger | undefined;
  readonly #networks = new Map<string, NetworkState>();
  readonly #listeners: FinalityListener[] = [];

  constructor(options: {
    source: BlockSource;
    /** The network is in use: whoever feeds `observe` should keep its finalized block coming. */
    demand?: (network: string) => void;
    logger?: Logger;
  }) {
    this.#source = options.source;
    this.#demand = options.demand;
    this.#logger = options.logger;
  }

  addListener(listener: FinalityListener): void {
    this.#listeners.push(listener);
  }

  /** The network's finalized height, if known. Synchronous: read on the hot path. */
  finalized(network: string): bigint | undefined {
    return this.#networks.get(network)?.finalized?.number;
  }

  /** Marks the network as in use (a read depends on its finality). Synchronous: on the hot path. */
  touch(network: string): void {
    this.#demand?.(network);
  }

  /**
   * The network's finalized block as an origin answered it (the chain tracker's fetch). Checked and
   * taken unless a check of this network is in flight (then joined, and this block dropped).
   */
  observe(network: string, block: FinalizedBlock): Promise<void> {
    return this.#exclusive(network, () => this.#take(network, normalise(block)));
  }

  /** Asks `source` for the finalized block once (joins a check already in flight). */
  refresh(network: string): Promise<void> {
    return this.#exclusive(network, async () => {
      const block = await this.#source(network, 'finalized');
      if (block !== undefined) await this.#take(network, normalise(block));
    });
  }

  /**
   * Someone (the cache) saw a block at `height` that disagrees with what was final: invalidate from
   * there at once, then find how deep the change goes.
   */
  reportConflict(network: string, height: bigint): Promise<void> {
    this.#emitReorg(network, height);
    const state = this.#state(network);
    // Runs after a poll in flight (never joins it: the search must happen).
    const run = (state.polling ?? Promise.resolve()).then(async () => {
      const block = await this.#source(network, 'finalized');
      await this.#conflict(network, height, block === undefined ? undefined : normalise(block));
    });
    const tracked: Promise<void> = run
      .catch((err: unknown) => this.#logger?.debug('finality conflict check failed', { network, err }))
      .finally(() => {
        if (state.polling === tracked) state.polling = undefined;
      });
    state.polling = tracked;
    return tracked;
  }

  #state(network: string): NetworkState {
    let state = this.#networks.get(network);
    if (state === undefined) {
      state = { history: new Map() };
      this.#networks.set(network, state);
    }
    return state;
  }

  #exclusive(network: string, work: () => Promise<void>): Promise<void> {
    const state = this.#state(network);
    if (state.polling !== undefined) return state.polling;
    const tracked: Promise<void> = work()
      .catch((err: unknown) => this.#logger?.debug('finality check failed', { network, err }))
      .finally(() => {
        if (state.polling === tracked) state.polling = undefined;
      });
    state.polling = tracked;
    return tracked;
  }

  async #take(network: string, block: FinalizedBlock): Promise<void> {
    const state = this.#state(network);
    const known = state.history.get(block.number.toString());
    if (known !== undefined && known !== block.hash) {
      await this.#conflict(network, block.number, block);
      return;
    }
    const current = state.finalized;
    if (current !== undefined && block.number < current.number) {
      // Lagging origin, or a chain that went back: does our finalized block still stand?
      const check = await this.#source(network, current.number);
      if (check === undefined || check.hash.toLowerCase() !== current.hash) {
        await this.#conflict(network, current.number, block);
        return;
      }
    } else {
      state.finalized = block;
    }
    this.#remember(state, block);
    for (const listener of this.#listeners) listener.observed?.(network, block);
  }

  /** The chain changed at or below `height`; `next` is the finalized block of the chain as it is now. */
  async #conflict(network: string, height: bigint, next: FinalizedBlock | undefined): Promise<void> {
    this.#emitReorg(network, height);
    const state = this.#state(network);
    const below = [...state.history.entries()]
      .map(([h, hash]) => ({ height: BigInt(h), hash }))
      .filter((entry) => entry.height < height)
      .sort((a, b) => (a.height < b.height ? -1 : a.height > b.height ? 1 : 0));
    // Binary search for the highest remembered block that still matches; the chain agrees below it.
    let lo = 0;
    let hi = below.length - 1;
    let match = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const entry = below[mid]!;
      const now = await this.#source(network, entry.height);
      if (now !== undefined && now.hash.toLowerCase() === entry.hash) {
        match = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    const from = match >= 0 ? below[match]!.height + 1n : 0n;
    this.#logger?.warn('blocks that were final changed: dropping cached answers from the divergence on', {
      network,
      from: from.toString(),
    });
    if (from < height) this.#emitReorg(network, from);
    for (const h of [...state.history.keys()]) if (BigInt(h) >= from) state.history.delete(h);
    state.finalized = next;
    if (next !== undefined) {
      this.#remember(state, next);
      for (const listener of this.#listeners) listener.observed?.(network, next);
    }
  }

  #remember(state: NetworkState, block: FinalizedBlock): void {
    const height = block.number.toString();
    state.history.delete(height);
    state.history.set(height, block.hash);
    while (state.history.size > HISTORY) {
      const oldest = state.history.keys().next().value;
      if (oldest === undefined) break;
      state.history.delete(oldest);
    }
  }

  #emitReorg(network: string, height: bigint): void {
    for (const listener of this.#listeners) listener.reorg?.(network, height);
  }
}

function normalise(block: FinalizedBlock): FinalizedBlock {
  return { number: block.number, hash: block.hash.toLowerCase() };
}
