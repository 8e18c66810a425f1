/**
 * Tracks each network's finalized block, which decides what the response cache may keep by number,
 * and notices when blocks that were final change (a reorg past finality, an origin on another chain,
 * a restarted devnet).
 *
 * Polling
 * - A network is polled only while in use: `touch(network)` marks it active (the cache calls it for
 *   reads that depend on finality) and polls at once while nothing is known; then every `intervalMs`
 *   (default 12 s, one slot) while it was touched within the last `idleMs` (default 5 min).
 * - A poll asks the network, through the gateway's own forwarding (so a healthy origin answers), for
 *   `eth_getBlockByNumber("finalized", false)`. A chain without that tag (pre-merge, some L2s) answers
 *   an error or null: its finalized height stays unknown, and blocks by number are never cached there.
 * - One poll in flight per network; failures are logged at debug and retried next round.
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
import type { Clock } from '../../../clock.js';
import type { Logger } from '../../../log.js';

export const FINALITY_POLL_MS = 12_000;
export const FINALITY_IDLE_MS = 300_000;
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
  lastTouched: number;
  polling?: Promise<void>;
}

export class FinalityTracker {
  readonly #source: BlockSource;
  readonly #clock: Clock;
  readonly #logger: Logger | undefined;
  readonly #idleMs: number;
  readonly #networks = new Map<string, NetworkState>();
  readonly #listeners: FinalityListener[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(options: {
    source: BlockSource;
    clock: Clock;
    logger?: Logger;
    intervalMs?: number;
    idleMs?: number;
    /** Start the background timer (default true); tests call `refresh` themselves. */
    poll?: boolean;
  }) {
    this.#source = options.source;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#idleMs = options.idleMs ?? FINALITY_IDLE_MS;
    if (options.poll ?? true) {
      this.#timer = setInterval(() => this.#pollActive(), options.intervalMs ?? FINALITY_POLL_MS);
      this.#timer.unref();
    }
  }

  addListener(listener: FinalityListener): void {
    this.#listeners.push(listener);
  }

  /** The network's finalized height, if known. Synchronous: read on the hot path. */
  finalized(network: string): bigint | undefined {
    return this.#networks.get(network)?.finalized?.number;
  }

  /** Marks the network as in use; starts a poll when its finality is not known yet. */
  touch(network: string): void {
    const state = this.#state(network);
    state.lastTouched = this.#clock.now();
    if (state.finalized === undefined && state.polling === undefined) void this.refresh(network);
  }

  /** Polls the network once (joins a poll or a conflict resolution already in flight). */
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

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #state(network: string): NetworkState {
    let state = this.#networks.get(network);
    if (state === undefined) {
      state = { history: new Map(), lastTouched: this.#clock.now() };
      this.#networks.set(network, state);
    }
    return state;
  }

  #exclusive(network: string, work: () => Promise<void>): Promise<void> {
    const state = this.#state(network);
    if (state.polling !== undefined) return state.polling;
    const tracked: Promise<void> = work()
      .catch((err: unknown) => this.#logger?.debug('finality poll failed', { network, err }))
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

  #pollActive(): void {
    const now = this.#clock.now();
    for (const [network, state] of this.#networks) {
      if (now - state.lastTouched <= this.#idleMs) void this.refresh(network);
    }
  }
}

function normalise(block: FinalizedBlock): FinalizedBlock {
  return { number: block.number, hash: block.hash.toLowerCase() };
}
