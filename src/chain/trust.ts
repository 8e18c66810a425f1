/**
 * The trust anchor of SPEC §18 for one network: the block hashes answers may be verified against.
 *
 * A block (height + hash) is trusted when origins in `quorum` different pools (default 2, never fewer)
 * report that hash at that height, or when one origin the operator trusts (`verify_anchor.origins`,
 * anchor.ts) reports it — never because one untrusted origin does, however often. Reports come from
 * every header the tracker sees: head polls and pushes, the blocks adoption asks backers for
 * (adoption.ts), and the anchor's own asks for a height nobody reported yet (network-chain.ts `anchor`).
 * A trusted block's parent is trusted too once its header is shown to hash to the trusted hash
 * (network-chain.ts walks the canonical window down that way; the hashing is the gateway's, injected).
 *
 * Bounds: at most TRUSTED_KEPT trusted heights (the lowest go first when more arrive) and reports for at
 * most REPORTED_KEPT heights (the oldest reported go first), so an origin that reports made-up heights
 * cannot grow them. A height trusted again with another hash (a reorg a quorum agrees on) replaces it and
 * drops every trusted height above it: those were blocks of the branch that lost.
 */
import type { BlockHead, TrustedBlock } from './types.js';

export type { TrustedBlock };

export const TRUSTED_KEPT = 1024;
export const REPORTED_KEPT = 256;

export class TrustedHashes {
  readonly #quorum: number;
  readonly #trusted = new Map<number, TrustedBlock>();
  /** height → hash → pool ids that reported it */
  readonly #reports = new Map<number, Map<string, Set<string>>>();
  #tip: TrustedBlock | undefined;

  constructor(quorum: number) {
    this.#quorum = Math.max(2, quorum);
  }

  get quorum(): number {
    return this.#quorum;
  }

  /** The highest trusted block. */
  get tip(): TrustedBlock | undefined {
    return this.#tip;
  }

  at(number: number): TrustedBlock | undefined {
    return this.#trusted.get(number);
  }

  /**
   * An origin of pool `poolId` reports `block` (`operators`: it is one the operator trusts). Returns the
   * block when this report made it trusted.
   */
  report(
    block: Pick<BlockHead, 'number' | 'hash' | 'header'>,
    poolId: string,
    operators: boolean,
  ): TrustedBlock | undefined {
    const known = this.#trusted.get(block.number);
    if (known?.hash === block.hash) {
      if (known.header === undefined && block.header !== undefined)
        this.#trusted.set(block.number, { ...known, header: block.header });
      return undefined;
    }
    const entry: TrustedBlock = { number: block.number, hash: block.hash, header: block.header };
    if (operators) return this.trust(entry);
    let byHash = this.#reports.get(block.number);
    if (byHash === undefined) {
      byHash = new Map();
      this.#reports.set(block.number, byHash);
      if (this.#reports.size > REPORTED_KEPT) this.#reports.delete(this.#reports.keys().next().value as number);
    }
    let pools = byHash.get(block.hash);
    if (pools === undefined) {
      pools = new Set();
      byHash.set(block.hash, pools);
    }
    pools.add(poolId);
    return pools.size >= this.#quorum ? this.trust(entry) : undefined;
  }

  /** Pools that reported `hash` at `number` so far (for the anchor's asks). */
  reporters(number: number, hash: string): number {
    return this.#reports.get(number)?.get(hash)?.size ?? 0;
  }

  /** Trusts `block` (a quorum's report, the operator's origin, or the parent of a trusted header). */
  trust(block: TrustedBlock): TrustedBlock {
    const known = this.#trusted.get(block.number);
    if (known !== undefined && known.hash !== block.hash) {
      for (const number of [...this.#trusted.keys()]) if (number > block.number) this.#trusted.delete(number);
      this.#tip = undefined;
    }
    this.#trusted.set(block.number, block);
    this.#reports.delete(block.number);
    if (this.#trusted.size > TRUSTED_KEPT) this.#trusted.delete(Math.min(...this.#trusted.keys()));
    if (this.#tip === undefined) this.#tip = this.#highest();
    else if (block.number >= this.#tip.number) this.#tip = block;
    return block;
  }

  #highest(): TrustedBlock | undefined {
    let best: TrustedBlock | undefined;
    for (const block of this.#trusted.values()) if (best === undefined || block.number > best.number) best = block;
    return best;
  }
}
