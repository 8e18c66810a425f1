/**
 * One network as the tracker sees it: its origins (from `networks.{name}.pools`, in config order), the
 * network head, the canonical chain and who may move it, the monotonic reported head, and the finalized
 * block while the network is in use.
 *
 * Network head: the highest head among the network's usable origins — pool enabled and healthy, origin
 * enabled and healthy (HealthView). Read on every forwarded call, so it is cached: a change of any of the
 * network's heads drops the cache at once; health has no change events, so a cached value also lapses
 * after HEAD_CACHE_MS (100 ms). A recomputation is one pass over the origins, health asked only of those
 * that would raise the maximum, without allocation.
 *
 * Canonical chain (canonical.ts) and the leader rule, so an origin on another chain cannot make it flap:
 * - the leader is the usable origin the chain follows for replacements; it stays leader while it is
 *   usable and its head is within LEADER_MARGIN (2) blocks of the network head, else the usable origin at
 *   the network head takes over (ties: the one whose head is our canonical block, else config order);
 * - an origin whose last LEADER_READ_FAILURES (2) head polls failed in a row (it died, or its push
 *   dropped and polling cannot reach it) offers nothing and cannot lead until it shows a header again:
 *   its last header is old news, and as leader it would hold the chain for LEADER_MARGIN blocks after
 *   its death when the survivors' blocks do not link to its last ones. One failure is not enough (a
 *   timeout must not hand the chain to an origin on another branch);
 * - after each poll round or new head, every usable origin's last header is offered, highest first
 *   (the leader first among equals): any origin may extend the chain with blocks that link to it; only
 *   the leader may replace blocks (a reorg) or restart it after a gap. So two origins on two chains make
 *   the chain switch only when the other one is ahead by more than the margin, and then it stays. A header
 *   the chain refused is not offered again (no fetches) until that origin shows another one.
 *
 * Finality: while the network was touched within FINALITY_IDLE_MS (5 min), its `finalized` block is
 * fetched from the best usable origin (the leader, else the highest) every FINALITY_POLL_MS (12 s), and
 * at once when it is touched while none is known (again at most once per poll interval while none is).
 * A chain without the tag (pre-merge, some L2s) answers undefined: its finalized block stays unknown.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { HealthView } from '../model/health-view.js';
import { CanonicalChain, type CanonicalEvents } from './canonical.js';
import type { OriginChain } from './origin-chain.js';
import type { BlockHead, ChainSource } from './types.js';

export const LEADER_MARGIN = 2;
/** Head polls failed in a row after which an origin offers no header and cannot lead. */
export const LEADER_READ_FAILURES = 2;
export const HEAD_CACHE_MS = 100;
export const FINALITY_POLL_MS = 12_000;
export const FINALITY_IDLE_MS = 300_000;
/** Origins asked, best first, before a network-wide block lookup gives up. */
const LOOKUP_TRIES = 2;

export interface NetworkChainDeps {
  readonly health: HealthView;
  readonly source: ChainSource;
  readonly clock: Clock;
  readonly logger: Logger | undefined;
  readonly events: CanonicalEvents;
  readonly finalized: (block: BlockHead) => void;
}

export class NetworkChain {
  readonly name: string;
  readonly pollIntervalMs: number;
  readonly canonical: CanonicalChain;
  /** The network's tracked origins, pools in config order. Replaced (never mutated) on directory changes. */
  origins: readonly OriginChain[] = [];
  reported: number | undefined;
  finalized: BlockHead | undefined;
  readonly #deps: NetworkChainDeps;
  #leader: OriginChain | undefined;
  #head: number | undefined;
  #headAt = Number.NEGATIVE_INFINITY;
  #advancing: Promise<void> | undefined;
  #again = false;
  /** The last header each origin offered that the chain refused: not offered again until it changes. */
  readonly #refused = new WeakMap<OriginChain, string>();
  #touchedAt: number | undefined;
  #finalityAt: number | undefined;
  #finalityInFlight = false;

  constructor(name: string, pollIntervalMs: number, deps: NetworkChainDeps) {
    this.name = name;
    this.pollIntervalMs = pollIntervalMs;
    this.#deps = deps;
    this.canonical = new CanonicalChain(deps.events);
  }

  /** The origin the canonical chain follows for replacements (see the header). */
  get leader(): OriginChain | undefined {
    return this.#leader;
  }

  networkHead(): number | undefined {
    const now = this.#deps.clock.now();
    if (now - this.#headAt < HEAD_CACHE_MS) return this.#head;
    this.#head = this.#computeHead();
    this.#headAt = now;
    return this.#head;
  }

  /** Something the network head depends on changed: recompute on the next read. */
  invalidate(): void {
    this.#headAt = Number.NEGATIVE_INFINITY;
  }

  usable(origin: OriginChain): boolean {
    const { health } = this.#deps;
    return (
      origin.pool.enabled &&
      origin.origin.enabled &&
      health.poolHealthy(origin.pool.id) &&
      health.originHealthy(origin.pool.id, origin.origin.name)
    );
  }

  /**
   * Offers the usable origins' headers to the canonical chain (one run at a time; a call during a run
   * makes it run once more, and the returned promise covers that too).
   */
  advance(): Promise<void> {
    if (this.#advancing !== undefined) {
      this.#again = true;
      return this.#advancing;
    }
    const run = async (): Promise<void> => {
      do {
        this.#again = false;
        await this.#step();
      } while (this.#again);
    };
    this.#advancing = run().finally(() => {
      this.#advancing = undefined;
    });
    return this.#advancing;
  }

  /** The network is in use (a read depends on its finality). */
  touch(): void {
    const now = this.#deps.clock.now();
    this.#touchedAt = now;
    // While nothing is known, a read that needs finality asks again, at most once per poll interval.
    if (
      this.finalized === undefined &&
      (this.#finalityAt === undefined || now - this.#finalityAt >= this.pollIntervalMs)
    )
      void this.fetchFinalized();
  }

  /** A poll round: fetch the finalized block when the network is in use and the last fetch is old. */
  finalityDue(): boolean {
    const now = this.#deps.clock.now();
    if (this.#touchedAt === undefined || now - this.#touchedAt > FINALITY_IDLE_MS) return false;
    return this.#finalityAt === undefined || now - this.#finalityAt >= FINALITY_POLL_MS;
  }

  async fetchFinalized(): Promise<void> {
    if (this.#finalityInFlight) return;
    this.#finalityInFlight = true;
    this.#finalityAt = this.#deps.clock.now();
    try {
      const block = await this.lookup('finalized');
      if (block !== undefined) {
        this.finalized = block;
        this.#deps.finalized(block);
      }
    } catch (err) {
      this.#deps.logger?.debug('finalized block fetch failed', { network: this.name, err });
    } finally {
      this.#finalityInFlight = false;
    }
  }

  /**
   * A block of this network from its best usable origins (highest head first; for a number, only those
   * known to have it, unless none is). Rejects when every origin asked failed.
   */
  async lookup(which: 'finalized' | number): Promise<BlockHead | undefined> {
    const ranked = this.origins
      .filter((origin) => this.usable(origin))
      .sort((a, b) => (b === this.#leader ? 1 : 0) - (a === this.#leader ? 1 : 0) || (b.head ?? -1) - (a.head ?? -1));
    const able = typeof which === 'number' ? ranked.filter((o) => o.head !== undefined && o.head >= which) : ranked;
    const asked = (able.length > 0 ? able : ranked).slice(0, LOOKUP_TRIES);
    let failure: unknown = new Error(`no usable origin for ${this.name}`);
    for (const origin of asked) {
      try {
        return await this.#deps.source.block(origin.pool, origin.origin, which);
      } catch (err) {
        failure = err;
      }
    }
    throw failure;
  }

  #computeHead(): number | undefined {
    let best: number | undefined;
    for (const origin of this.origins) {
      const head = origin.head;
      if (head === undefined || (best !== undefined && head <= best)) continue;
      if (this.usable(origin)) best = head;
    }
    return best;
  }

  async #step(): Promise<void> {
    this.invalidate();
    const head = this.networkHead();
    const offers = this.origins.filter(
      (origin) => origin.header !== undefined && origin.headReadFailures < LEADER_READ_FAILURES && this.usable(origin),
    );
    if (head === undefined || offers.length === 0) return;
    const leader = this.#chooseLeader(offers, head);
    offers.sort(
      (a, b) =>
        (b.header as BlockHead).number - (a.header as BlockHead).number ||
        (b === leader ? 1 : 0) - (a === leader ? 1 : 0),
    );
    for (const origin of offers) {
      const header = origin.header as BlockHead;
      const mayReplace = origin === leader;
      if (!mayReplace && this.#refused.get(origin) === header.hash) continue;
      try {
        const outcome = await this.canonical.follow(
          header,
          (n) => this.#deps.source.block(origin.pool, origin.origin, n),
          mayReplace,
        );
        if (outcome === 'refused') this.#refused.set(origin, header.hash);
        if (outcome === 'failed') {
          this.#deps.logger?.debug('canonical chain step failed (the origin changed while read)', {
            network: this.name,
            pool: origin.pool.name,
            origin: origin.origin.name,
          });
        }
      } catch (err) {
        this.#deps.logger?.debug('canonical chain step failed', {
          network: this.name,
          pool: origin.pool.name,
          origin: origin.origin.name,
          err,
        });
      }
    }
  }

  #chooseLeader(offers: readonly OriginChain[], head: number): OriginChain | undefined {
    const current = this.#leader;
    if (current !== undefined && offers.includes(current) && (current.head ?? -1) >= head - LEADER_MARGIN) {
      return current;
    }
    const top = Math.max(...offers.map((origin) => origin.header?.number ?? -1));
    const atTop = offers.filter((origin) => origin.header?.number === top);
    const ours = this.canonical.at(top)?.hash;
    this.#leader = atTop.find((origin) => ours !== undefined && origin.hash === ours) ?? atTop[0];
    return this.#leader;
  }
}
