/**
 * What the tracker knows of one origin (pool id + origin name), as routing reads it (OriginChainState).
 *
 * Head
 * - A header from a poll or a push (`takeHeader`) is the origin's claim. It becomes the origin's head once
 *   the network's canonical chain adopts it (`accept`, network-chain.ts) — even when it is lower than
 *   before: the origin is the authority on its own chain (a reorg to a shorter branch, a restarted devnet,
 *   a node re-syncing). A claim the chain refuses (`refuse`, SPEC §20) leaves the origin `refused`: its
 *   head is then the last header of it that was adopted (or its own header, when that is lower), so a
 *   lying origin never looks ahead; the next adopted header clears it.
 * - An answer that shows only a number (`sawNumber`, e.g. eth_blockNumber through the forwarder) only
 *   raises the head, and the hash is then unknown until the next header. It never moves the network head
 *   (network-chain.ts), and the tracker refuses numbers above the network's head ceiling before they get
 *   here. A header lower than a raised number drops it (the origin went back).
 * - `adoptedHead` is what the network head is computed from: the last adopted header's number (refused:
 *   as `head`), never a number an answer showed.
 *
 * Earliest block
 * - `archive: true` → always 0; missing-data answers teach nothing.
 * - Otherwise 0 until a missing-data answer for block n (`lacks`) raises it to n + 1 — unless n is at or
 *   above the origin's known head: a missing block there means the origin is behind, not pruned. (The
 *   forwarder reports only answers that mean pruning: pruned state or history, or an unknown block below
 *   a known head — gateway/upstream/answer-checks.ts.)
 * - A learned earliest block is forgotten EARLIEST_TTL_MS (1 h) after it was last raised or confirmed,
 *   so a node that was re-synced or had its pruning changed is tried again. Read through the clock on
 *   every access (a getter, no timer).
 *
 * Syncing: what eth_syncing said last (false until asked; asked with the first poll and then every
 * SYNCING_CHECK_MS, 30 s).
 *
 * Polls (`poll`, the tracker's rounds): one in flight at a time (a slow origin skips rounds): its
 * `latest` header, unless a live newHeads push brings it (head-pushes.ts); a failure (the origin could not
 * be asked, or answered no block) keeps the last state, counts toward `readsFailing` (so an origin that
 * never shows a head does not keep the others waiting: adoption.ts) and is logged at debug.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { Origin, Pool } from '../model/pool.js';
import type { BlockHead, ChainSource, OriginChainState } from './types.js';

export const EARLIEST_TTL_MS = 3_600_000;
export const SYNCING_CHECK_MS = 30_000;
/** Head polls failed in a row after which an origin's last header is old news (see `readsFailing`). */
export const READ_FAILURES_DOWN = 2;

export class OriginChain implements OriginChainState {
  pool: Pool;
  origin: Origin;
  syncing = false;
  /** The last header polled or pushed: the origin's claim, adopted or not. */
  header: BlockHead | undefined;
  /** The last of its headers the canonical chain adopted. */
  adopted: BlockHead | undefined;
  refused = false;
  /** The hash of the last refused header already counted (switchyard_chain_head_refused_total). */
  countedRefusal: string | undefined;
  /** The poll of this origin in flight (one at a time). */
  polling: Promise<void> | undefined;
  /** When eth_syncing was last asked (clock ms); undefined = never. */
  syncingCheckedAt: number | undefined;
  /** The origin's newHeads push (its `ws_address`) is live: its head is not polled meanwhile. */
  pushLive = false;
  /**
   * Head polls that failed in a row since the last header (polled or pushed); from READ_FAILURES_DOWN on
   * the origin offers nothing to the canonical chain (network-chain.ts) and backs no one (adoption.ts).
   */
  headReadFailures = 0;
  readonly #clock: Clock;
  /** The highest number an answer showed above the adopted header, if any. */
  #raised: number | undefined;
  #learned = 0;
  #learnedAt = 0;

  constructor(pool: Pool, origin: Origin, clock: Clock) {
    this.pool = pool;
    this.origin = origin;
    this.#clock = clock;
  }

  /** Its last READ_FAILURES_DOWN head polls failed: its last header is old news. */
  get readsFailing(): boolean {
    return this.headReadFailures >= READ_FAILURES_DOWN;
  }

  get archive(): boolean {
    return this.origin.archive === true;
  }

  get earliest(): number {
    if (this.#learned === 0 || this.archive) return 0;
    if (this.#clock.now() - this.#learnedAt >= EARLIEST_TTL_MS) {
      this.#learned = 0;
      return 0;
    }
    return this.#learned;
  }

  get head(): number | undefined {
    const adopted = this.adopted?.number;
    if (this.refused) return adopted === undefined ? undefined : Math.min(adopted, this.header?.number ?? adopted);
    if (this.#raised !== undefined && (adopted === undefined || this.#raised > adopted)) return this.#raised;
    return adopted;
  }

  get hash(): string | undefined {
    const adopted = this.adopted;
    if (adopted === undefined || adopted.number !== this.head) return undefined;
    return adopted.hash;
  }

  /** What the network head is computed from (see the header). */
  get adoptedHead(): number | undefined {
    return this.refused ? this.head : this.adopted?.number;
  }

  /** A header from a poll or push: the origin's claim. True when it is another header than before. */
  takeHeader(header: BlockHead): boolean {
    const changed = header.hash !== this.header?.hash;
    this.headReadFailures = 0;
    this.header = header;
    if (this.#raised !== undefined && header.number < this.#raised) this.#raised = undefined;
    return changed;
  }

  /** The canonical chain adopted `header` (the origin's claim when it was judged). */
  accept(header: BlockHead): void {
    this.adopted = header;
    this.refused = false;
    if (this.#raised !== undefined && this.#raised <= header.number) this.#raised = undefined;
  }

  /** The canonical chain refused the origin's claim. True the first time this header is refused. */
  refuse(header: BlockHead): boolean {
    this.refused = true;
    if (this.countedRefusal === header.hash) return false;
    this.countedRefusal = header.hash;
    return true;
  }

  /** An answer showed the origin has at least block `number`. True when the head rose. */
  sawNumber(number: number): boolean {
    const head = this.head;
    if (this.refused || (head !== undefined && number <= head)) return false;
    this.#raised = number;
    return true;
  }

  /** The origin answered missing data for block `number`. True when its earliest block rose. */
  lacks(number: number): boolean {
    if (this.archive || (this.head !== undefined && number >= this.head)) return false;
    const current = this.earliest;
    if (number + 1 < current) return false;
    this.#learnedAt = this.#clock.now();
    if (number + 1 === current) return false; // confirmed: the hour starts again
    this.#learned = number + 1;
    return true;
  }

  /** Polls the origin (joining a poll in flight); a header it shows goes to `take`. */
  poll(deps: { source: ChainSource; clock: Clock; logger: Logger | undefined }, take: (h: BlockHead) => void) {
    if (this.polling !== undefined) return this.polling;
    const { source, clock, logger } = deps;
    const where = { pool: this.pool.name, origin: this.origin.name };
    const run = async (): Promise<void> => {
      // A live newHeads push (head-pushes.ts) brings the head; only eth_syncing is still asked.
      if (!this.pushLive) {
        try {
          const header = await source.block(this.pool, this.origin, 'latest');
          // No latest block (null, or an error answer) is no head either: a failed read.
          if (header !== undefined) take(header);
          else this.headReadFailures += 1;
        } catch (err) {
          this.headReadFailures += 1;
          logger?.debug('head poll failed', { ...where, err });
        }
      }
      const checked = this.syncingCheckedAt;
      if (checked !== undefined && clock.now() - checked < SYNCING_CHECK_MS) return;
      this.syncingCheckedAt = clock.now();
      try {
        this.syncing = await source.syncing(this.pool, this.origin);
      } catch (err) {
        logger?.debug('eth_syncing poll failed', { ...where, err });
      }
    };
    this.polling = run().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }
}
