/**
 * One network as the tracker sees it: its origins (from `networks.{name}.pools`, in config order), the
 * network head, the canonical chain and who may move it, the monotonic reported head, and the finalized
 * block while the network is in use.
 *
 * Network head: the highest adopted head among the network's usable origins — pool enabled and healthy,
 * origin enabled and healthy (HealthView) — where an origin's adopted head is its last header the
 * canonical chain adopted (origin-chain.ts `adoptedHead`), never a number an answer showed and never a
 * refused claim (SPEC §20). A lone origin (the only one tracked) counts with its whole head, answers
 * included, as before that rule. Read on every forwarded call, so it is cached: a change of any of the
 * network's heads drops the cache at once; health has no change events, so a cached value also lapses
 * after HEAD_CACHE_MS (100 ms). A recomputation is one pass over the origins, health asked only of those
 * that would raise the maximum, without allocation.
 *
 * Head ceiling (head-bound.ts): from the canonical tip, when it was adopted and the chain's block
 * interval; none for a lone origin. Read by answer checks and by the tracker for numbers answers show.
 *
 * Canonical chain (canonical.ts), the adoption rule (adoption.ts) and the leader rule, so an origin on
 * another chain cannot make it flap:
 * - the leader is the usable origin the chain follows for replacements; it stays leader while it is
 *   usable and its head is within LEADER_MARGIN (2) blocks of the network head (a refused origin's head
 *   is its last adopted one: a lying leader soon falls out), else the offering origin with the highest
 *   header takes over (refused origins only when every one is; ties: the one whose head is our canonical
 *   block, else config order). The leader may replace blocks only with a claim another origin backs;
 * - an origin whose last READ_FAILURES_DOWN (2) head polls failed in a row (it died, or its push
 *   dropped and polling cannot reach it) offers nothing and cannot lead until it shows a header again:
 *   its last header is old news, and as leader it would hold the chain for LEADER_MARGIN blocks after
 *   its death when the survivors' blocks do not link to its last ones. One failure is not enough (a
 *   timeout must not hand the chain to an origin on another branch);
 * - after each poll round or new head, every usable origin's last header is offered, highest first
 *   (the leader first among equals) and judged by adoption.ts: adopted headers become their origin's
 *   head (`accept`), refused ones mark it refused (`refuse`, counted once per header by
 *   `switchyard_chain_head_refused_total`). A refused header is not judged again while nothing it was
 *   judged on changed (the same header, canonical tip, usable and offering origins and leadership, on
 *   the same side of the head ceiling, and no origin's header changed since); when
 *   a step moved the tip after refusing a header, the step runs again (a claim above another origin's
 *   may link once that one is adopted).
 *
 * Finality: while the network was touched within FINALITY_IDLE_MS (5 min), its `finalized` block is
 * fetched from the best usable origin (the leader, else the highest) every FINALITY_POLL_MS (12 s), and
 * at once when it is touched while none is known (again at most once per poll interval while none is).
 * A chain without the tag (pre-merge, some L2s) answers undefined: its finalized block stays unknown.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { HealthView } from '../model/health-view.js';
import { type AdoptionContext, type Judgement, judgeClaim } from './adoption.js';
import { resolveAnchor } from './anchor.js';
import { CanonicalChain, type CanonicalEvents } from './canonical.js';
import { blockIntervalMs, ceiling, type HeadBound } from './head-bound.js';
import { type HeaderHasher, NetworkAnchor } from './network-anchor.js';
import type { OriginChain } from './origin-chain.js';
import type { BlockHead, ChainSource } from './types.js';

export const LEADER_MARGIN = 2;
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
  /** `networks.{name}.verify_anchor.origins`: the operator's trusted origins (anchor.ts). */
  readonly anchor: readonly string[];
  /** A header of `origin` was refused (once per header): counts it. */
  readonly refused: (origin: OriginChain) => void;
  /** `networks.{name}.verify_anchor.quorum`: pools that must agree on a hash before it is trusted. */
  readonly quorum?: number | undefined;
  /** Hashes a header's fields (verify/, injected by the gateway); none: no trust through parent hashes. */
  readonly hashHeader?: HeaderHasher | undefined;
}

export class NetworkChain {
  readonly name: string;
  readonly pollIntervalMs: number;
  readonly canonical: CanonicalChain;
  /** The trust anchor of SPEC §18 (network-anchor.ts). */
  readonly anchor: NetworkAnchor;
  reported: number | undefined;
  finalized: BlockHead | undefined;
  readonly #deps: NetworkChainDeps;
  /** The network's tracked origins, pools in config order. Replaced (never mutated) on directory changes. */
  #origins: readonly OriginChain[] = [];
  #trusted: ReadonlySet<OriginChain> = new Set();
  #unmatched = '';
  #leader: OriginChain | undefined;
  #head: number | undefined;
  #headAt = Number.NEGATIVE_INFINITY;
  #advancing: Promise<void> | undefined;
  #again = false;
  /** What each refused or pending header was judged on (see the header): not judged again while it is the same. */
  readonly #refused = new WeakMap<OriginChain, string>();
  /** Bumped whenever an origin of the network shows another header. */
  #headers = 0;
  /** The canonical tip as a HeadBound on the monotonic clock, and the same on the wall clock (`bound`). */
  #bound: HeadBound | undefined;
  #boundWall: HeadBound | undefined;
  #intervalStale = false;
  #touchedAt: number | undefined;
  #finalityAt: number | undefined;
  #finalityInFlight = false;

  constructor(name: string, pollIntervalMs: number, deps: NetworkChainDeps) {
    this.name = name;
    this.pollIntervalMs = pollIntervalMs;
    this.#deps = deps;
    this.canonical = new CanonicalChain({
      ...deps.events,
      head: (block) => {
        this.#adopted(block);
        deps.events.head(block);
      },
    });
    this.anchor = new NetworkAnchor({
      quorum: deps.quorum ?? 2,
      canonical: this.canonical,
      source: deps.source,
      clock: deps.clock,
      retryAfterMs: pollIntervalMs,
      hashHeader: deps.hashHeader,
      origins: () => this.#origins,
      operators: () => this.#trusted,
      usable: (origin) => this.usable(origin),
    });
  }

  get origins(): readonly OriginChain[] {
    return this.#origins;
  }

  /** The tracked origins changed (a directory change): keeps them and who of them is trusted. */
  track(origins: readonly OriginChain[]): void {
    this.#origins = origins;
    const anchor = resolveAnchor(this.#deps.anchor, origins);
    this.#trusted = anchor.trusted;
    const unmatched = anchor.unmatched.join(', ');
    if (unmatched !== '' && unmatched !== this.#unmatched) {
      this.#deps.logger?.warn('verify_anchor.origins entries that name no single tracked origin trust nothing', {
        network: this.name,
        entries: anchor.unmatched,
      });
    }
    this.#unmatched = unmatched;
    this.invalidate();
  }

  /** Another header from one of the network's origins: refused headers are judged again. */
  headersChanged(): void {
    this.#headers += 1;
    this.invalidate();
  }

  /** The highest head an origin may plausibly show now (head-bound.ts); undefined: no limit. */
  headCeiling(): number | undefined {
    if (this.#origins.length === 1) return undefined;
    this.#measureInterval();
    return this.#bound === undefined ? undefined : ceiling(this.#bound, this.#deps.clock.monotonic());
  }

  /** The same bound on the wall clock, for processes that share only that reading (cluster/). */
  get bound(): HeadBound | undefined {
    if (this.#origins.length === 1) return undefined;
    this.#measureInterval();
    return this.#boundWall;
  }

  /** A new canonical head: the ceiling counts from it (its interval is measured when next read). */
  #adopted(block: BlockHead): void {
    const intervalMs = this.#bound?.intervalMs ?? 0;
    this.#bound = { tip: block.number, since: this.#deps.clock.monotonic(), intervalMs };
    this.#boundWall = { ...this.#bound, since: this.#deps.clock.now() };
    this.#intervalStale = true;
  }

  #measureInterval(): void {
    if (!this.#intervalStale || this.#bound === undefined || this.#boundWall === undefined) return;
    this.#intervalStale = false;
    const intervalMs = blockIntervalMs(this.canonical.blocks());
    this.#bound = { ...this.#bound, intervalMs };
    this.#boundWall = { ...this.#boundWall, intervalMs };
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
    const lone = this.#origins.length === 1;
    let best: number | undefined;
    for (const origin of this.#origins) {
      const head = lone ? origin.head : origin.adoptedHead;
      if (head === undefined || (best !== undefined && head <= best)) continue;
      if (this.usable(origin)) best = head;
    }
    return best;
  }

  async #step(): Promise<void> {
    this.invalidate();
    const offers = this.#origins.filter(
      (origin) => origin.header !== undefined && !origin.readsFailing && this.usable(origin),
    );
    if (offers.length === 0) return;
    const leader = this.#chooseLeader(offers);
    offers.sort(
      (a, b) =>
        (b.header as BlockHead).number - (a.header as BlockHead).number ||
        (b === leader ? 1 : 0) - (a === leader ? 1 : 0),
    );
    const context: AdoptionContext = {
      canonical: this.canonical,
      tracked: this.#origins,
      offers,
      leader,
      trusted: this.#trusted,
      ceiling: this.headCeiling(),
      source: this.#deps.source,
      usable: (origin) => this.usable(origin),
      reported: (origin, block) => this.anchor.report(origin, block),
    };
    // Who could back a claim, or leave its origin alone: part of what a refusal was judged on.
    const present = this.#origins.filter((origin) => !origin.readsFailing && this.usable(origin)).length;
    let refusedOne = false;
    for (const origin of offers) {
      const header = origin.header as BlockHead;
      const tip = this.canonical.tip?.hash;
      const ceiling = this.headCeiling();
      const within = ceiling === undefined || header.number <= ceiling;
      const judgedOn = `${header.hash}|${tip}|${this.#headers}|${present}|${offers.length}|${origin === leader}|${within}`;
      if (this.#refused.get(origin) === judgedOn) continue;
      const outcome = await this.#judge(origin, header, { ...context, ceiling });
      if (outcome === 'refused' || outcome === 'pending') {
        this.#refused.set(origin, judgedOn);
        refusedOne = true;
      } else if (refusedOne && this.canonical.tip?.hash !== tip) {
        this.#again = true;
      }
    }
  }

  /** One origin's claim judged (adoption.ts) and the verdict kept on the origin. */
  async #judge(origin: OriginChain, header: BlockHead, context: AdoptionContext): Promise<Judgement | undefined> {
    const where = { network: this.name, pool: origin.pool.name, origin: origin.origin.name };
    let outcome: Judgement;
    try {
      outcome = await judgeClaim(origin, header, context);
    } catch (err) {
      this.#deps.logger?.debug('canonical chain step failed', { ...where, err });
      return undefined;
    }
    // The origin may have shown another header meanwhile: that one is judged next.
    const current = origin.header === header;
    if (outcome === 'refused') {
      const was = origin.refused;
      if (current && origin.refuse(header)) {
        this.#deps.refused(origin);
        const claim = { ...where, number: header.number, hash: header.hash, adopted: this.canonical.tip?.number };
        if (was) this.#deps.logger?.debug('head claim refused', claim);
        else this.#deps.logger?.info('head claim refused: it neither links to the chain nor is backed', claim);
      }
    } else if (outcome === 'pending') {
      this.#deps.logger?.debug('head claim pending: no other origin can back it yet', where);
    } else if (outcome === 'failed') {
      this.#deps.logger?.debug('canonical chain step failed (the origin changed while read)', where);
    } else if (current) {
      origin.accept(header);
    }
    this.invalidate();
    return outcome;
  }

  #chooseLeader(offers: readonly OriginChain[]): OriginChain | undefined {
    const head = this.networkHead();
    const current = this.#leader;
    if (
      current !== undefined &&
      offers.includes(current) &&
      (head === undefined || (current.head ?? -1) >= head - LEADER_MARGIN)
    ) {
      return current;
    }
    const candidates = offers.some((origin) => !origin.refused) ? offers.filter((origin) => !origin.refused) : offers;
    const top = Math.max(...candidates.map((origin) => origin.header?.number ?? -1));
    const atTop = candidates.filter((origin) => origin.header?.number === top);
    const ours = this.canonical.at(top)?.hash;
    this.#leader = atTop.find((origin) => ours !== undefined && origin.hash === ours) ?? atTop[0];
    return this.#leader;
  }
}
