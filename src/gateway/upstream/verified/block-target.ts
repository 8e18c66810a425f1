/**
 * The block a verified call is checked at (SPEC §18: "at a tag or number, resolved to a trusted block"),
 * from its block parameter, before any origin is asked:
 *   absent, `latest`        → the newest trusted block (the anchor's tip, chain/trust.ts) — a little behind
 *                             the newest head while the pools have not all reported it;
 *   a number, `earliest`    → the trusted block at that height (the anchor may ask origins for it);
 *   `safe`, `finalized`     → the trusted block at the network's finalized height (what the tracker last
 *                             fetched for the tag); `safe` is answered at the finalized block too;
 *   `pending`               → not provable: the call is forwarded unverified;
 *   a block hash, or an EIP-1898 object with `blockHash` → that block: its header is proven by its own
 *                             hash, no anchor needed (the client named it);
 *   `{blockNumber}`         → as the number.
 * No trusted block (fewer than `quorum` pools agree, no finalized block known) is `unanchored`: the client
 * gets -32050, and no origin is blamed.
 */
import type { TrustAnchor, TrustedBlock } from '../../../chain/types.js';

export type BlockTarget =
  | { readonly kind: 'trusted'; readonly block: TrustedBlock }
  | { readonly kind: 'hash'; readonly hash: string };

export type Resolution =
  | BlockTarget
  | { readonly kind: 'unprovable' }
  /** `asked`: the block as the call named it, for the client's message. */
  | { readonly kind: 'unanchored'; readonly asked: string };

/** What resolving reads of the chain tracker. */
export interface TargetChain extends TrustAnchor {
  finalized(network: string): { readonly number: number } | undefined;
}

const HASH = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]{1,16}$/;

export async function resolveBlock(chain: TargetChain, network: string, param: unknown): Promise<Resolution> {
  if (param === undefined || param === 'latest') {
    const tip = chain.trustedTip(network);
    return tip === undefined ? { kind: 'unanchored', asked: 'latest' } : { kind: 'trusted', block: tip };
  }
  if (param === 'pending') return { kind: 'unprovable' };
  if (param === 'earliest') return anchored(chain, network, 0, 'earliest');
  if (param === 'safe' || param === 'finalized') {
    const finalized = chain.finalized(network)?.number;
    return finalized === undefined ? { kind: 'unanchored', asked: param } : anchored(chain, network, finalized, param);
  }
  if (typeof param === 'string' && HASH.test(param)) return { kind: 'hash', hash: param.toLowerCase() };
  if (typeof param === 'string' && QUANTITY.test(param)) return anchored(chain, network, Number(param), param);
  if (param !== null && typeof param === 'object' && !Array.isArray(param)) {
    const { blockHash, blockNumber } = param as { blockHash?: unknown; blockNumber?: unknown };
    if (blockHash !== undefined) return resolveBlock(chain, network, blockHash);
    if (blockNumber !== undefined) return resolveBlock(chain, network, blockNumber);
  }
  return { kind: 'unprovable' };
}

async function anchored(chain: TargetChain, network: string, number: number, asked: string): Promise<Resolution> {
  const block = await chain.anchor(network, number);
  return block === undefined ? { kind: 'unanchored', asked } : { kind: 'trusted', block };
}

/** The block parameter that names `target` to an origin: its number, or the hash the client gave. */
export function targetParam(target: BlockTarget): string {
  return target.kind === 'trusted' ? `0x${target.block.number.toString(16)}` : target.hash;
}

/** The target as the client's messages name it. */
export function describeTarget(target: BlockTarget): string {
  return target.kind === 'trusted' ? `block ${target.block.number}` : `block ${target.hash}`;
}
