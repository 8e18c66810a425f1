/**
 * Read-your-writes (SPEC §9). When an origin takes a client's `eth_sendRawTransaction` (answers a
 * `result`), that client's pending-state reads — receipts and transactions by hash, and
 * eth_getTransactionCount / eth_call / eth_estimateGas at `pending` (`readYourWrites` in the method table,
 * rpc/call-needs.ts `followsWrites`) — go to that origin first for `gateway.sticky_after_write` (default
 * 60 s), even when it is behind the network head: it is the one origin sure to know the transaction.
 * The client is its gateway API key, else its remote address (the handler's `client`).
 *
 * One entry per client and network (the latest write wins), at most `maxEntries` (default 100 000; the
 * oldest dropped first), expired entries dropped when met. Reads the injected Clock. With an
 * AffinityShare (workers), each write recorded is published, and the entries of every process adopted.
 */
import type { Clock } from '../../clock.js';
import { AffinityMap } from './affinity-map.js';
import type { AffinityShare } from './affinity-share.js';

/** Most entries kept by default. */
export const WRITE_AFFINITY_MAX_ENTRIES = 100_000;

export interface WriteHome {
  readonly poolId: string;
  readonly origin: string;
}

export class WriteAffinity {
  readonly #clock: Clock;
  #ttlMs: number;
  /** client + network → where its last transaction went, and until when that counts */
  readonly #homes: AffinityMap<WriteHome & { until: number }>;
  readonly #share: AffinityShare | undefined;

  constructor(clock: Clock, ttlMs: number, options: { maxEntries?: number; share?: AffinityShare | undefined } = {}) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    this.#homes = new AffinityMap(options.maxEntries ?? WRITE_AFFINITY_MAX_ENTRIES);
    this.#share = options.share;
    this.#share?.subscribe((entry) => {
      if (entry.kind === 'write') {
        const { poolId, origin, until } = entry;
        this.#homes.adopt(`${entry.network}\u0000${entry.client}`, { poolId, origin, until });
      }
    });
  }

  /** A reloaded `gateway.sticky_after_write`: for transactions taken from now on. */
  setTtl(ttlMs: number): void {
    this.#ttlMs = ttlMs;
  }

  /** An origin took this client's transaction. */
  record(client: string, network: string, home: WriteHome): void {
    if (this.#ttlMs <= 0) return;
    const until = this.#clock.now() + this.#ttlMs;
    this.#homes.set(`${network}\u0000${client}`, { poolId: home.poolId, origin: home.origin, until });
    this.#share?.publish({ kind: 'write', network, client, poolId: home.poolId, origin: home.origin, until });
  }

  /** Where this client's pending-state reads go first, while its last write is recent. */
  homeOf(client: string, network: string): WriteHome | undefined {
    if (this.#homes.size === 0) return undefined;
    return this.#homes.live(`${network}\u0000${client}`, this.#clock.now());
  }
}
