/**
 * The chain tracker (SPEC §9): one view per network of what each origin has, read by routing on every
 * call (ChainView), taught by answers (ChainFeedback), and followed by a canonical chain whose heads,
 * reorgs and finalized blocks go to listeners (subscriptions §10, incident alerts §14, the response
 * cache's finality).
 *
 * Which origins: for each configured network, the pools named in `networks.{name}.pools` (looked up by
 * name in the PoolDirectory, followed through its changes), their enabled origins with weight > 0 in
 * enabled pools — the origins routing can pick. State is keyed by pool id + origin name and kept across
 * directory changes unless the origin's address changed (then it is another node: state starts over).
 * A pool listed by two networks shares its origins' state.
 *
 * Feeding
 * - Polls: every `networks.{name}.head_poll_interval` (default 1 s) each origin is asked `eth_getBlockByNumber
 *   ("latest", false)` (origin-chain.ts `poll`: one in flight, eth_syncing every 30 s); new origins at once.
 * - Pushes: origins with a `ws_address` get a newHeads subscription (head-pushes.ts, through the
 *   `pushes` source; while it is live their head is not polled); `headSeen` takes a header exactly as a
 *   poll does. A header is the origin's claim: the network adopts it or refuses it (adoption.ts,
 *   SPEC §20: no single origin moves the chain).
 * - Answers (ChainFeedback, from the forwarder): `sawHead` raises an origin's head (never above a head
 *   ceiling of its networks: such a number is counted as refused), `lacksBlock` teaches its earliest
 *   block (origin-chain.ts), `reported` raises the network's monotonic head (never above the ceiling).
 * - Health probes: main.ts passes each block number a jsonrpc probe saw to `sawHead` (health/round.ts).
 *
 * Reading: `networkHead`, `origin`, `reportedHead` and `headCeiling` are synchronous lookups; `touch`
 * marks a network in use for finality; `block(network, which)` reads a block from the network's best
 * usable origins (the cache's finality lookups). More in network-chain.ts, head-bound.ts, canonical.ts.
 * Trust anchor (SPEC §18): every header an origin shows is its report of a block hash (network-anchor.ts).
 *
 * Lifecycle: the tracker follows the directory from construction; `start()` polls at once and then on
 * each network's interval (unref'd timers); `stop()` ends both for good (answers still in flight are
 * taken, nothing new is asked, listeners hear nothing more). Without `start()` nothing is asked but
 * through `refresh()` (tests). A config reload hands in new networks (`reconfigure`: network-setup.ts
 * says which keep their chain).
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { HealthView } from '../model/health-view.js';
import type { PoolDirectory } from '../model/pool.js';
import type { HeadBound } from './head-bound.js';
import { HeadPushes } from './head-pushes.js';
import { type ChainCounts, chainMetrics } from './metrics.js';
import type { HeaderHasher } from './network-anchor.js';
import type { NetworkChain } from './network-chain.js';
import { type ChainNetworkSettings, makeNetworkChain, type NetworkSetup, sameChainSettings } from './network-setup.js';
import { OriginChain } from './origin-chain.js';
import { listing, type TrackedOrigin } from './tracked-origin.js';
import type {
  BlockHead,
  ChainFeedback,
  ChainListener,
  ChainSource,
  ChainView,
  HeadPushSource,
  OriginChainState,
  TrustAnchor,
  TrustedBlock,
} from './types.js';

export type { ChainNetworkSettings } from './network-setup.js';
export { SYNCING_CHECK_MS } from './origin-chain.js';
export type { TrackedOrigin } from './tracked-origin.js';

export interface ChainTrackerOptions {
  readonly networks: Readonly<Record<string, ChainNetworkSettings>>;
  readonly directory: PoolDirectory;
  readonly health: HealthView;
  readonly source: ChainSource;
  /** newHeads pushes from origins with a `ws_address` (head-pushes.ts); none: every origin is polled. */
  readonly pushes?: HeadPushSource;
  readonly clock: Clock;
  readonly logger?: Logger;
  readonly metrics?: MetricsRegistry;
  /** Hashes a header's fields (the gateway passes verify/'s): trusted blocks vouch for their parents. */
  readonly hashHeader?: HeaderHasher;
}

export class ChainTracker implements ChainView, ChainFeedback, TrustAnchor {
  #options: ChainTrackerOptions;
  readonly #networks = new Map<string, NetworkChain>();
  /** pool id → origin name → state: two lookups, no key string built on the hot path. */
  #origins = new Map<string, Map<string, OriginChain>>();
  #networksOf = new Map<OriginChain, NetworkChain[]>();
  readonly #listeners = new Set<ChainListener>();
  /** network → its poll timer, while running. */
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #setup: NetworkSetup;
  #pushes: HeadPushes | undefined;
  #unsubscribe: (() => void) | undefined;
  #running = false;
  #stopped = false;
  readonly #counts: ChainCounts | undefined;

  constructor(options: ChainTrackerOptions) {
    this.#options = options;
    this.#counts = options.metrics === undefined ? undefined : chainMetrics(options.metrics, this);
    const { health, source, clock, logger } = options;
    const emit = (call: (listener: ChainListener) => void) => this.#emit(call);
    this.#setup = { health, source, clock, logger, counts: this.#counts, hashHeader: options.hashHeader, emit };
    for (const [name, settings] of Object.entries(options.networks)) {
      if (settings.pools.length > 0) this.#networks.set(name, makeNetworkChain(name, settings, this.#setup));
    }
    this.#reindex();
    this.#unsubscribe = options.directory.onChange(() => this.#reindex());
  }

  start(): void {
    if (this.#running || this.#stopped) return;
    this.#running = true;
    const pushes = this.#options.pushes;
    if (pushes !== undefined) {
      this.#pushes = new HeadPushes(pushes, (record, header) => this.#take(record, header));
      this.#pushes.sync(this.#tracked());
    }
    for (const network of this.#networks.values()) this.#schedule(network);
  }

  /**
   * A config reload's networks: a network added starts (polled at once when running), one removed (or
   * left without pools) stops, one whose poll interval or trust anchor changed starts over
   * (network-setup.ts); the others keep their chain and re-read their pools.
   */
  reconfigure(networks: Readonly<Record<string, ChainNetworkSettings>>): void {
    if (this.#stopped) return;
    const before = this.#options.networks;
    this.#options = { ...this.#options, networks };
    for (const [name, chain] of [...this.#networks]) {
      const next = networks[name];
      const old = before[name];
      if (next !== undefined && next.pools.length > 0 && old !== undefined && sameChainSettings(old, next)) continue;
      clearInterval(this.#timers.get(name));
      this.#timers.delete(name);
      this.#networks.delete(chain.name);
    }
    const added: NetworkChain[] = [];
    for (const [name, settings] of Object.entries(networks)) {
      if (settings.pools.length === 0 || this.#networks.has(name)) continue;
      const chain = makeNetworkChain(name, settings, this.#setup);
      this.#networks.set(name, chain);
      added.push(chain);
    }
    this.#reindex();
    if (this.#running) for (const chain of added) this.#schedule(chain);
  }

  stop(): void {
    this.#running = false;
    this.#stopped = true;
    for (const timer of this.#timers.values()) clearInterval(timer);
    this.#timers.clear();
    this.#pushes?.stop();
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  /** Polls every origin of every network once (joining polls in flight) and moves the canonical chains. */
  async refresh(): Promise<void> {
    await Promise.all([...this.#networks.values()].map((network) => this.#round(network)));
  }

  addListener(listener: ChainListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // ── ChainView ──

  networkHead(network: string): number | undefined {
    return this.#networks.get(network)?.networkHead();
  }

  origin(poolId: string, originName: string): OriginChainState | undefined {
    return this.#origins.get(poolId)?.get(originName);
  }

  reportedHead(network: string): number | undefined {
    return this.#networks.get(network)?.reported;
  }

  headCeiling(network: string): number | undefined {
    return this.#networks.get(network)?.headCeiling();
  }

  // ── ChainFeedback ──

  /** A number above a network's head ceiling is refused (counted, and the origin's head stays). */
  sawHead(poolId: string, originName: string, number: number): void {
    const record = this.#origins.get(poolId)?.get(originName);
    if (record === undefined) return;
    const networks = this.#networksOf.get(record) ?? [];
    const beyond = networks.find((network) => number > (network.headCeiling() ?? Number.POSITIVE_INFINITY));
    if (beyond !== undefined) {
      this.#counts?.refused(beyond.name, originName);
      return;
    }
    if (!record.sawNumber(number)) return;
    for (const network of networks) network.invalidate();
  }

  lacksBlock(poolId: string, originName: string, number: number): void {
    const record = this.#origins.get(poolId)?.get(originName);
    if (record?.lacks(number) === true) {
      this.#options.logger?.debug('origin earliest block learned from a missing-data answer', {
        pool: record.pool.name,
        origin: originName,
        earliest: record.earliest,
      });
    }
  }

  /** Raises the monotonic head; never above the head ceiling (a number no adopted chain can have yet). */
  reported(network: string, number: number): void {
    const chain = this.#networks.get(network);
    if (chain === undefined || number > (chain.headCeiling() ?? Number.POSITIVE_INFINITY)) return;
    if (chain.reported === undefined || number > chain.reported) chain.reported = number;
  }

  // ── Heads from polls and pushes ──

  /** An origin showed this header as its head (a poll, or a newHeads push: head-pushes.ts). */
  headSeen(poolId: string, originName: string, header: BlockHead): void {
    const record = this.#origins.get(poolId)?.get(originName);
    if (record !== undefined) this.#take(record, header);
  }

  // ── TrustAnchor (SPEC §18) ──

  trustedTip(network: string): TrustedBlock | undefined {
    return this.#networks.get(network)?.anchor.hashes.tip;
  }
  trustedHash(network: string, number: number): string | undefined {
    return this.#networks.get(network)?.anchor.hashes.at(number)?.hash;
  }
  async anchor(network: string, number: number): Promise<TrustedBlock | undefined> {
    return this.#networks.get(network)?.anchor.anchor(number);
  }

  // ── Finality and lookups ──

  /** The network is in use by a read that depends on finality (keeps its finalized block fetched). */
  touch(network: string): void {
    this.#networks.get(network)?.touch();
  }

  /** The finalized block last fetched for the network (not monotonic: FinalityTracker judges that). */
  finalized(network: string): BlockHead | undefined {
    return this.#networks.get(network)?.finalized;
  }

  /**
   * A block of the network from its best usable origins (the leader first, then by head): undefined when
   * the origin answered that it has none; rejects when no origin could be asked.
   */
  block(network: string, which: 'finalized' | number): Promise<BlockHead | undefined> {
    const chain = this.#networks.get(network);
    return chain === undefined ? Promise.resolve(undefined) : chain.lookup(which);
  }

  // ── Listings ──

  /** The canonical chain's recent blocks (up to 128), oldest first. */
  canonical(network: string): BlockHead[] {
    return this.#networks.get(network)?.canonical.blocks() ?? [];
  }

  canonicalHead(network: string): BlockHead | undefined {
    return this.#networks.get(network)?.canonical.tip;
  }

  /** The hash of the canonical block at `number`, while the window holds it (the response cache's check). */
  canonicalHash(network: string, number: number): string | undefined {
    return this.#networks.get(network)?.canonical.at(number)?.hash;
  }

  /** The network's head ceiling on the wall clock, for the workers' replicas (cluster/publisher.ts). */
  headBound(network: string): HeadBound | undefined {
    return this.#networks.get(network)?.bound;
  }

  /** The networks the tracker follows (configured, with at least one pool). */
  networks(): string[] {
    return [...this.#networks.keys()];
  }

  /** The origin the network's canonical chain follows for replacements (network-chain.ts), once chosen. */
  leader(network: string): TrackedOrigin | undefined {
    const chain = this.#networks.get(network);
    const record = chain?.leader;
    if (chain === undefined || record === undefined) return undefined;
    return listing(chain, record);
  }

  trackedOrigins(network: string): TrackedOrigin[] {
    const chain = this.#networks.get(network);
    if (chain === undefined) return [];
    return chain.origins.map((record) => listing(chain, record));
  }

  // ── Internals ──

  /** Polls the network now and then on its interval. */
  #schedule(network: NetworkChain): void {
    const timer = setInterval(() => void this.#round(network), network.pollIntervalMs);
    timer.unref();
    this.#timers.set(network.name, timer);
    void this.#round(network);
  }

  async #round(network: NetworkChain): Promise<void> {
    const work: Array<Promise<void>> = network.origins.map((record) => this.#poll(record));
    if (network.finalityDue()) work.push(network.fetchFinalized());
    await Promise.all(work);
    // Also when nothing changed: health may have (the leader rule reads it).
    await network.advance();
  }

  #poll(record: OriginChain): Promise<void> {
    if (this.#stopped) return record.polling ?? Promise.resolve();
    const { source, clock, logger } = this.#options;
    return record.poll({ source, clock, logger }, (header) => this.#take(record, header));
  }

  #take(record: OriginChain, header: BlockHead): void {
    if (!record.takeHeader(header)) return;
    for (const network of this.#networksOf.get(record) ?? []) {
      network.anchor.report(record, header);
      network.headersChanged();
      void network.advance();
    }
  }

  /** Rebuilds each network's origin list from the directory, keeping the state of origins that stayed. */
  #reindex(): void {
    const { directory, clock, networks } = this.#options;
    const origins = new Map<string, Map<string, OriginChain>>();
    const networksOf = new Map<OriginChain, NetworkChain[]>();
    const fresh: OriginChain[] = [];
    for (const chain of this.#networks.values()) {
      const list: OriginChain[] = [];
      for (const poolName of networks[chain.name]?.pools ?? []) {
        const pool = directory.poolByName(poolName);
        if (pool === undefined || !pool.enabled) continue;
        let byName = origins.get(pool.id);
        if (byName === undefined) {
          byName = new Map();
          origins.set(pool.id, byName);
        }
        for (const origin of pool.origins) {
          if (!origin.enabled || origin.weight <= 0) continue;
          let record = byName.get(origin.name);
          if (record === undefined) {
            const known = this.#origins.get(pool.id)?.get(origin.name);
            record = known !== undefined && known.origin.address === origin.address ? known : undefined;
            if (record === undefined) {
              record = new OriginChain(pool, origin, clock);
              fresh.push(record);
            }
            record.pool = pool;
            record.origin = origin;
            byName.set(origin.name, record);
          }
          if (!list.includes(record)) list.push(record);
          const of = networksOf.get(record);
          if (of === undefined) networksOf.set(record, [chain]);
          else if (!of.includes(chain)) of.push(chain);
        }
      }
      chain.track(list);
    }
    this.#origins = origins;
    this.#networksOf = networksOf;
    if (this.#running) for (const record of fresh) void this.#poll(record);
    this.#pushes?.sync(this.#tracked());
  }

  /** Every tracked origin, once. */
  #tracked(): Set<OriginChain> {
    const all = new Set<OriginChain>();
    for (const byName of this.#origins.values()) for (const record of byName.values()) all.add(record);
    return all;
  }

  #emit(call: (listener: ChainListener) => void): void {
    if (this.#stopped) return;
    for (const listener of this.#listeners) {
      try {
        call(listener);
      } catch (err) {
        this.#options.logger?.error('chain listener failed', { err });
      }
    }
  }
}
