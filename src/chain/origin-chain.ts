/**
 * What the tracker knows of one origin (pool id + origin name), as routing reads it (OriginChainState).
 *
 * Head
 * - A header from a poll or a push (`takeHeader`) sets the head, number and hash, even when it is lower
 *   than before: the origin is the authority on its own chain (a reorg to a shorter branch, a restarted
 *   devnet, a node re-syncing).
 * - An answer that shows only a number (`sawNumber`, e.g. eth_blockNumber through the forwarder) only
 *   raises the head; the hash is then unknown until the next header.
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
 * Syncing: what eth_syncing said last (false until asked; the poller asks every SYNCING_CHECK_MS).
 */
import type { Clock } from '../clock.js';
import type { Origin, Pool } from '../model/pool.js';
import type { BlockHead, OriginChainState } from './types.js';

export const EARLIEST_TTL_MS = 3_600_000;

export class OriginChain implements OriginChainState {
  pool: Pool;
  origin: Origin;
  head: number | undefined;
  hash: string | undefined;
  syncing = false;
  /** The last header polled or pushed (its number may be below `head` when an answer raised it). */
  header: BlockHead | undefined;
  /** The poll of this origin in flight (one at a time). */
  polling: Promise<void> | undefined;
  /** When eth_syncing was last asked (clock ms); undefined = never. */
  syncingCheckedAt: number | undefined;
  /** The origin's newHeads push (its `ws_address`) is live: its head is not polled meanwhile. */
  pushLive = false;
  /**
   * Head polls that failed in a row since the last header (polled or pushed); the leader rule reads it
   * (network-chain.ts LEADER_READ_FAILURES).
   */
  headReadFailures = 0;
  readonly #clock: Clock;
  #learned = 0;
  #learnedAt = 0;

  constructor(pool: Pool, origin: Origin, clock: Clock) {
    this.pool = pool;
    this.origin = origin;
    this.#clock = clock;
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

  /** A header from a poll or push. True when the head or its hash changed. */
  takeHeader(header: BlockHead): boolean {
    const changed = header.number !== this.head || header.hash !== this.hash;
    this.headReadFailures = 0;
    this.header = header;
    this.head = header.number;
    this.hash = header.hash;
    return changed;
  }

  /** An answer showed the origin has at least block `number`. True when the head rose. */
  sawNumber(number: number): boolean {
    if (this.head !== undefined && number <= this.head) return false;
    this.head = number;
    this.hash = undefined;
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
}
