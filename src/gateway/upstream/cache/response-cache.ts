/**
 * The gateway's response cache for immutable answers (policy in `policy.ts`, finality in `finality.ts`).
 *
 * - Stores the origin's raw answer bytes; the gateway splices each client's own id into them, so a hit
 *   costs no JSON work at all.
 * - Bounded by bytes (`gateway.cache_max_bytes`, default 64 MiB, LRU); one entry may use at most an
 *   eighth of it. `cache_max_bytes: 0` disables caching and coalescing.
 * - Coalescing: while a cacheable read is in flight, identical reads (same network, method and
 *   canonical params) wait for it instead of calling an origin again — N concurrent → 1 upstream call.
 *   Every waiter gets the same answer bytes, errors included (errors are shared, never stored).
 * - Only answers that are what was asked, on the adopted chain, are kept (cacheability.ts `admit`, SPEC
 *   §20): by hash the hash asked for; by number, and receipts, the `canonical` chain's block (the chain
 *   tracker's window). Anything else is answered but not kept.
 * - Reorgs: entries that depend on a block carry its height (and hash). When the finality tracker
 *   reports a changed finalized block, or a finalized-block observation disagrees with the hash of a
 *   cached block at that height, every entry of that network at or above that height is dropped, and a
 *   per-network generation counter makes any read still in flight from before the reorg skip storing.
 * - Counters: hits, misses, coalesced waits, stores, evictions, invalidations — exported as Prometheus
 *   metrics (`switchyard_gateway_cache_*`) when a registry is given, and by `stats()`.
 */
import type { MetricsRegistry } from '../../../metrics/registry.js';
import { type Admission, admit, type CanonicalHashes, needsFinality, planRead, type ReadPlan } from './cacheability.js';
import type { FinalityTracker, FinalizedBlock } from './finality.js';
import { ByteLru } from './lru.js';

/**
 * An origin's answer as the forwarder produced it: raw body bytes and, when the producer knows it,
 * the HTTP status (absent = a reply the forwarder accepted as a JSON-RPC response, i.e. 200).
 */
export interface OriginAnswer {
  readonly status?: number;
  readonly body: Buffer;
}

export type CacheOutcome = 'hit' | 'miss' | 'coalesced';

export interface CacheStats {
  hits: number;
  misses: number;
  coalesced: number;
  stores: number;
  evictions: number;
  invalidations: number;
  entries: number;
  bytes: number;
}

interface CacheEntry<A> {
  readonly bytes: number;
  readonly kind: ReadPlan['kind'];
  readonly answer: A;
  readonly network: string;
  readonly height?: bigint;
  readonly blockHash?: string;
}

const MAX_ENTRY_FRACTION = 8;

/** `A` is whatever the forwarder returns (the gateway's UpstreamReply); only its body is inspected. */
export class ResponseCache<A extends OriginAnswer = OriginAnswer> {
  readonly #lru: ByteLru<CacheEntry<A>>;
  readonly #finality: FinalityTracker | undefined;
  readonly #canonical: CanonicalHashes | undefined;
  readonly #inFlight = new Map<string, Promise<A>>();
  /** network → height (decimal string) → keys of entries depending on that block */
  readonly #byHeight = new Map<string, Map<string, Set<string>>>();
  readonly #generation = new Map<string, number>();
  readonly #stats = { hits: 0, misses: 0, coalesced: 0, stores: 0, invalidations: 0 };
  readonly #metrics:
    | { hits: (n: string) => void; misses: (n: string) => void; coalesced: (n: string) => void }
    | undefined;
  readonly enabled: boolean;

  constructor(options: {
    maxBytes: number;
    finality?: FinalityTracker;
    /** The chain tracker's canonical hashes: blocks by number and receipts are kept only when they match. */
    canonical?: CanonicalHashes;
    metrics?: MetricsRegistry;
  }) {
    this.enabled = options.maxBytes > 0;
    this.#lru = new ByteLru<CacheEntry<A>>({
      maxBytes: options.maxBytes,
      maxEntryBytes: Math.floor(options.maxBytes / MAX_ENTRY_FRACTION),
      onEvict: (key, entry) => this.#unindex(key, entry),
    });
    this.#finality = options.finality;
    this.#canonical = options.canonical;
    this.#finality?.addListener({
      reorg: (network, height) => this.invalidateFrom(network, height),
      observed: (network, block) => this.#checkObserved(network, block),
    });
    const registry = options.metrics;
    if (registry !== undefined) {
      const counter = (name: string, help: string) => {
        const metric = registry.counter(name, help, ['network']);
        // Networks come from plans of configured networks only: one bound series each, made once.
        const series = new Map<string, { inc(): void }>();
        return (network: string) => {
          let bound = series.get(network);
          if (bound === undefined) {
            bound = metric.series({ network });
            series.set(network, bound);
          }
          bound.inc();
        };
      };
      this.#metrics = {
        hits: counter('switchyard_gateway_cache_hits_total', 'Reads answered from the response cache'),
        misses: counter('switchyard_gateway_cache_misses_total', 'Cacheable reads that went to an origin'),
        coalesced: counter(
          'switchyard_gateway_cache_coalesced_total',
          'Reads that waited for an identical read in flight instead of calling an origin',
        ),
      };
      registry.gauge('switchyard_gateway_cache_bytes', 'Bytes held by the response cache', [], () => this.#lru.bytes);
      registry.gauge('switchyard_gateway_cache_entries', 'Entries in the response cache', [], () => this.#lru.size);
      registry.gauge(
        'switchyard_gateway_cache_evictions',
        'Entries evicted to stay within cache_max_bytes',
        [],
        () => this.#lru.evictions,
      );
    }
  }

  /**
   * The plan for a parsed read, or undefined when it is not cacheable (then forward it as usual).
   * Cheap and synchronous: a method switch and, for cacheable methods only, a short key string.
   */
  plan(network: string, method: string, params: unknown): ReadPlan | undefined {
    if (!this.enabled) return undefined;
    if (this.#finality !== undefined && needsFinality(method, params)) this.#finality.touch(network);
    return planRead(network, method, params, this.#finality?.finalized(network));
  }

  /** The cached answer for a plan, counting a hit; undefined on a miss (counted when it is fetched). */
  lookup(plan: ReadPlan): A | undefined {
    const entry = this.#lru.get(plan.key);
    if (entry === undefined) return undefined;
    this.#stats.hits += 1;
    this.#metrics?.hits(plan.network);
    return entry.answer;
  }

  /**
   * Answers a planned read: from the cache, by joining an identical read in flight, or by calling
   * `forward` once and storing its answer when `policy.admit` allows. `forward` must not depend on the
   * client that happened to start it (it may be shared by many).
   */
  async read(plan: ReadPlan, forward: () => Promise<A>): Promise<{ answer: A; outcome: CacheOutcome }> {
    const cached = this.lookup(plan);
    if (cached !== undefined) return { answer: cached, outcome: 'hit' };
    const pending = this.#inFlight.get(plan.key);
    if (pending !== undefined) {
      this.#stats.coalesced += 1;
      this.#metrics?.coalesced(plan.network);
      return { answer: await pending, outcome: 'coalesced' };
    }
    this.#stats.misses += 1;
    this.#metrics?.misses(plan.network);
    const generation = this.#generation.get(plan.network) ?? 0;
    const fetching = forward().then((answer) => {
      if ((this.#generation.get(plan.network) ?? 0) === generation) this.#store(plan, answer);
      return answer;
    });
    this.#inFlight.set(plan.key, fetching);
    try {
      return { answer: await fetching, outcome: 'miss' };
    } finally {
      this.#inFlight.delete(plan.key);
    }
  }

  /** Drops every entry of the network that depends on a block at or above `height`. */
  invalidateFrom(network: string, height: bigint): number {
    this.#generation.set(network, (this.#generation.get(network) ?? 0) + 1);
    const heights = this.#byHeight.get(network);
    if (heights === undefined) return 0;
    let dropped = 0;
    for (const [h, keys] of [...heights]) {
      if (BigInt(h) < height) continue;
      for (const key of [...keys]) if (this.#lru.delete(key)) dropped += 1;
      heights.delete(h);
    }
    this.#stats.invalidations += dropped;
    return dropped;
  }

  stats(): CacheStats {
    return { ...this.#stats, evictions: this.#lru.evictions, entries: this.#lru.size, bytes: this.#lru.bytes };
  }

  #store(plan: ReadPlan, answer: A): void {
    const admission: Admission | undefined = admit(
      plan,
      answer.status ?? 200,
      answer.body,
      this.#finality?.finalized(plan.network),
      this.#canonical,
    );
    if (admission === undefined) return;
    const entry: CacheEntry<A> = {
      bytes: answer.body.length,
      kind: plan.kind,
      answer,
      network: plan.network,
      ...admission,
    };
    const previous = this.#lru.peek(plan.key);
    if (previous !== undefined) this.#unindex(plan.key, previous);
    if (!this.#lru.set(plan.key, entry)) return;
    this.#stats.stores += 1;
    if (entry.height !== undefined) {
      let heights = this.#byHeight.get(plan.network);
      if (heights === undefined) {
        heights = new Map();
        this.#byHeight.set(plan.network, heights);
      }
      const h = entry.height.toString();
      let keys = heights.get(h);
      if (keys === undefined) {
        keys = new Set();
        heights.set(h, keys);
      }
      keys.add(plan.key);
    }
  }

  #unindex(key: string, entry: CacheEntry<A>): void {
    if (entry.height === undefined) return;
    const heights = this.#byHeight.get(entry.network);
    const h = entry.height.toString();
    const keys = heights?.get(h);
    keys?.delete(key);
    if (keys !== undefined && keys.size === 0) heights?.delete(h);
  }

  /**
   * Entries admitted as final (blocks by number, mined transactions) name the block at their height. A
   * finalized block with another hash at that height means the chain changed there: report it, so the
   * tracker drops everything from the divergence on. (Blocks by hash may be side blocks: no signal.)
   */
  #checkObserved(network: string, block: FinalizedBlock): void {
    const keys = this.#byHeight.get(network)?.get(block.number.toString());
    if (keys === undefined) return;
    for (const key of keys) {
      const entry = this.#lru.peek(key);
      if (entry === undefined || entry.kind === 'block-hash' || entry.blockHash === undefined) continue;
      if (entry.blockHash !== block.hash) {
        void this.#finality?.reportConflict(network, block.number);
        return;
      }
    }
  }
}
