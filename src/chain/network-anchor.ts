/**
 * One network's trust anchor (SPEC §18) as the tracker keeps it: the trusted hashes (trust.ts), fed by
 * every header an origin shows, and `anchor(n)`, the trusted block at a height, found in three ways:
 *
 * 1. already trusted (a quorum of pools, or an operator's origin, reported it);
 * 2. below a trusted block of the canonical window (canonical.ts): walking down from the nearest trusted
 *    height above n, each window block whose hash is the trusted one and whose header fields hash to it
 *    (the injected `hashHeader`: verify/'s computation, wired by the gateway) makes its parent trusted —
 *    no origin is asked. Without `hashHeader` this step is skipped;
 * 3. otherwise the origins are asked for block n (`eth_getBlockByNumber`, the tracker's ChainSource): one
 *    usable origin per pool (operators' origins first, then those whose head reaches n), `quorum` pools at
 *    once, then one more pool at a time while the answers disagree, at most `quorum` + EXTRA_ASKS pools.
 *    Their answers are reports like any other. Asks for one height share one round; a round that found
 *    no quorum is not repeated for that height within the network's `head_poll_interval` (no client
 *    call can make the gateway ask origins faster than it polls them).
 * Undefined when nothing makes n trusted: a network with fewer pools than `quorum` and no operator's
 * origin never has an anchor.
 */
import type { Clock } from '../clock.js';
import type { CanonicalChain } from './canonical.js';
import type { OriginChain } from './origin-chain.js';
import { type TrustedBlock, TrustedHashes } from './trust.js';
import type { BlockHead, ChainSource } from './types.js';

/** Pools asked beyond `quorum` when the first answers disagree. */
export const EXTRA_ASKS = 2;

/** The hash a header object's fields hash to; undefined when it cannot be computed. */
export type HeaderHasher = (header: Readonly<Record<string, unknown>>) => string | undefined;

export interface NetworkAnchorDeps {
  readonly quorum: number;
  readonly canonical: CanonicalChain;
  readonly source: ChainSource;
  readonly clock: Clock;
  /** How long a round that found no quorum for a height stands (the network's head_poll_interval). */
  readonly retryAfterMs: number;
  readonly hashHeader?: HeaderHasher | undefined;
  /** The network's tracked origins now. */
  origins(): readonly OriginChain[];
  /** The operator's origins now (anchor.ts). */
  operators(): ReadonlySet<OriginChain>;
  usable(origin: OriginChain): boolean;
}

export class NetworkAnchor {
  readonly hashes: TrustedHashes;
  readonly #deps: NetworkAnchorDeps;
  readonly #asking = new Map<number, Promise<TrustedBlock | undefined>>();
  /** height → when a round found no quorum for it */
  readonly #failedAt = new Map<number, number>();
  /** Canonical blocks whose header fields were hashed to their hash. */
  readonly #hashed = new WeakSet<BlockHead>();

  constructor(deps: NetworkAnchorDeps) {
    this.#deps = deps;
    this.hashes = new TrustedHashes(deps.quorum);
  }

  /** An origin of the network showed `block` (a poll, a push, a backer's answer, an ask). */
  report(origin: OriginChain, block: BlockHead): void {
    this.hashes.report(block, origin.pool.id, this.#deps.operators().has(origin));
  }

  /** The trusted block at `number` (see the header); undefined when none can be had. */
  anchor(number: number): Promise<TrustedBlock | undefined> {
    const known = this.hashes.at(number) ?? this.#fromWindow(number);
    if (known !== undefined) return Promise.resolve(known);
    const failed = this.#failedAt.get(number);
    if (failed !== undefined && this.#deps.clock.monotonic() - failed < this.#deps.retryAfterMs) {
      return Promise.resolve(undefined);
    }
    let asking = this.#asking.get(number);
    if (asking === undefined) {
      asking = this.#ask(number).finally(() => this.#asking.delete(number));
      this.#asking.set(number, asking);
    }
    return asking;
  }

  /** Step 2 of the header: down the canonical window from the nearest trusted height above `number`. */
  #fromWindow(number: number): TrustedBlock | undefined {
    const { canonical, hashHeader } = this.#deps;
    const tip = canonical.tip;
    if (hashHeader === undefined || tip === undefined || number >= tip.number) return undefined;
    let height = number + 1;
    while (height <= tip.number && this.hashes.at(height) === undefined) height += 1;
    if (height > tip.number) return undefined;
    for (; height > number; height -= 1) {
      const block = canonical.at(height);
      if (block === undefined || block.hash !== this.hashes.at(height)?.hash) return undefined;
      if (!this.#hashed.has(block)) {
        if (hashHeader(block.header) !== block.hash) return undefined;
        this.#hashed.add(block);
      }
      const parent = canonical.at(height - 1);
      this.hashes.trust({
        number: height - 1,
        hash: block.parentHash,
        header: parent?.hash === block.parentHash ? parent.header : undefined,
      });
    }
    return this.hashes.at(number);
  }

  /** Step 3 of the header. */
  async #ask(number: number): Promise<TrustedBlock | undefined> {
    const { source, quorum } = this.#deps;
    const askable = this.#askable(number);
    let next = 0;
    const askOne = async (): Promise<void> => {
      const origin = askable[next++];
      if (origin === undefined) return;
      try {
        const block = await source.block(origin.pool, origin.origin, number);
        if (block !== undefined && block.number === number) this.report(origin, block);
      } catch {
        // Could not be asked: it reports nothing.
      }
    };
    await Promise.all(Array.from({ length: Math.min(quorum, askable.length) }, askOne));
    while (this.hashes.at(number) === undefined && next < Math.min(askable.length, quorum + EXTRA_ASKS)) {
      await askOne();
    }
    const found = this.hashes.at(number);
    if (found === undefined) this.#failedAt.set(number, this.#deps.clock.monotonic());
    if (this.#failedAt.size > 256) this.#failedAt.delete(this.#failedAt.keys().next().value as number);
    return found;
  }

  /** One usable origin per pool, operators' origins first, then those whose head reaches `number`. */
  #askable(number: number): OriginChain[] {
    const operators = this.#deps.operators();
    const rank = (origin: OriginChain) =>
      (operators.has(origin) ? 2 : 0) + (origin.head !== undefined && origin.head >= number ? 1 : 0);
    const usable = this.#deps
      .origins()
      .filter((origin) => this.#deps.usable(origin) && !origin.readsFailing)
      .sort((a, b) => rank(b) - rank(a));
    const chosen: OriginChain[] = [];
    const pools = new Set<string>();
    for (const origin of usable) {
      if (operators.has(origin) || !pools.has(origin.pool.id)) chosen.push(origin);
      pools.add(origin.pool.id);
    }
    return chosen;
  }
}
