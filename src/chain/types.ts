/**
 * The chain tracker's vocabulary (SPEC §9): what it knows of each origin's chain, what a call needs from
 * one, and the two ports the rest of the gateway uses — `ChainView` (read, synchronous, on the hot path)
 * and `ChainFeedback` (what answers reveal). `chain/` imports only `model/` and the leaves; routing/ and
 * gateway/ import it.
 *
 * Block numbers are JS numbers: exact up to 2^53, far beyond any chain's height.
 */
import type { Origin, Pool } from '../model/pool.js';

/** A block header as the tracker keeps it. */
export interface BlockHead {
  readonly number: number;
  /** Lowercase 0x + 64 hex. */
  readonly hash: string;
  readonly parentHash: string;
  /** Seconds since the epoch. */
  readonly timestamp: number;
  /** The header object as the origin answered it (`eth_getBlockByNumber(…, false)`), for newHeads (§10). */
  readonly header: Readonly<Record<string, unknown>>;
}

/** What one origin has, as far as the tracker knows. */
export interface OriginChainState {
  /**
   * The origin's head as the gateway credits it: its last header the canonical chain adopted, raised by
   * answers up to the network's head ceiling; undefined until one is adopted or an answer showed one. An
   * origin whose claim was refused (below) keeps the last head of it that was adopted (lower still when
   * its own header is lower).
   */
  readonly head: number | undefined;
  /** The hash of `head` when it came from a header (an answer that showed only a number leaves it undefined). */
  readonly hash: string | undefined;
  /**
   * Lowest block the origin serves state and history for: 0 for `archive: true` and until learned from a
   * missing-data answer (forgotten an hour after it was learned).
   */
  readonly earliest: number;
  /** The origin said it is syncing (eth_syncing not false). */
  readonly syncing: boolean;
  /**
   * Its latest header was refused by the adoption rule (network-chain.ts, SPEC §20: it neither links to
   * the canonical chain nor is reported by another origin, or it is further ahead than the chain allows):
   * routing treats it as lagging for head-relative calls until a header of it is adopted again.
   */
  readonly refused: boolean;
}

/**
 * What a call needs from an origin's chain (gateway/rpc/call-needs.ts classifies, routing/ orders by it):
 *   head  — head-relative: a latest/pending/safe/finalized tag or no block parameter;
 *   block — pinned to blocks from..to (a number, `earliest` = 0, an eth_getLogs range);
 *   hash  — a lookup by hash: any origin, but a null from one behind the network head is retried;
 *   none  — nothing chain-dependent (eth_chainId, net_version, web3_sha3, …).
 */
export type CallNeeds =
  | { readonly kind: 'head' }
  | { readonly kind: 'block'; readonly from: number; readonly to: number }
  | { readonly kind: 'hash' }
  | { readonly kind: 'none' };

/** The tracker as routing reads it. Synchronous and cheap: called for every forwarded call. */
export interface ChainView {
  /** The highest head among the network's healthy origins; undefined while none is known. */
  networkHead(network: string): number | undefined;
  /** One origin's state (pool id + origin name); undefined when the tracker has never seen it. */
  origin(poolId: string, originName: string): OriginChainState | undefined;
  /** The highest block number the gateway has reported for the network (monotonic head), if any. */
  reportedHead(network: string): number | undefined;
  /**
   * The highest head an origin may plausibly show for the network now (chain/head-bound.ts): the adopted
   * head plus 10 × the blocks the chain's interval allows since it was adopted, plus 8. An answer or a
   * claim above it is refused. Undefined while no head is adopted, and for a lone origin (no limit).
   */
  headCeiling(network: string): number | undefined;
}

/** A trusted block (chain/trust.ts): a hash a quorum of pools, or an operator's origin, reported at a height. */
export interface TrustedBlock {
  readonly number: number;
  /** Lowercase 0x + 64 hex. */
  readonly hash: string;
  /**
   * The header object one origin answered for it, when the tracker has one: its fields are that
   * origin's word until they are hashed to `hash` (the gateway does, before it reads any).
   */
  readonly header?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The trust anchor (SPEC §18) as answer verification reads it: block hashes a quorum of pools, or an
 * operator's origin, reported (trust.ts, network-anchor.ts).
 */
export interface TrustAnchor {
  /** The newest trusted block of the network. */
  trustedTip(network: string): TrustedBlock | undefined;
  /** The trusted hash at a height, when one is held now (no origin is asked). */
  trustedHash(network: string, number: number): string | undefined;
  /** The trusted block at a height, asking origins when none is held; undefined when none can be had. */
  anchor(network: string, number: number): Promise<TrustedBlock | undefined>;
}

/** What answers reveal, reported by the forwarder. */
export interface ChainFeedback {
  /** The origin answered with a head at least this high (eth_blockNumber, a latest block, a receipt). */
  sawHead(poolId: string, originName: string, number: number): void;
  /** The origin answered a missing-data error for block `number`: it serves nothing at or below it. */
  lacksBlock(poolId: string, originName: string, number: number): void;
  /** The gateway reported this head to a client of the network (the monotonic head only rises). */
  reported(network: string, number: number): void;
}

// ── How the tracker (src/chain/tracker.ts) asks origins, and what it tells listeners. ──

/**
 * How the tracker asks one origin (the gateway implements it over its origin clients:
 * gateway/upstream/chain-source.ts). `block` resolves undefined when the origin answered but has no such
 * block (a null result, or an error answer such as an unsupported `finalized` tag); it rejects when the
 * origin could not be asked (connect, timeout, HTTP failure, garbled answer). Both bounded by a timeout.
 */
export interface ChainSource {
  block(pool: Pool, origin: Origin, which: 'latest' | 'finalized' | number): Promise<BlockHead | undefined>;
  /** True while the origin says it is syncing (eth_syncing answers anything but false). */
  syncing(pool: Pool, origin: Origin): Promise<boolean>;
}

/** Blocks that left a network's canonical chain. The new branch's heads follow as `head` events. */
export interface ChainReorg {
  /** The first block number whose block changed. */
  readonly forkPoint: number;
  /** The canonical blocks from `forkPoint` on that were replaced, oldest first. */
  readonly removed: readonly BlockHead[];
  /**
   * The change reached below the tracker's window of recent blocks: the real fork point is at or below
   * `forkPoint` (the window's lowest block, or 0 when the chain was restarted with another block 0), and
   * `removed` holds only what the window held.
   */
  readonly beyondWindow: boolean;
}

/**
 * What the tracker tells about a network's canonical chain, in order and synchronously (a listener must
 * not block). Per network: `head` numbers rise by exactly 1 (no gap, no duplicate) except right after a
 * `reorg` (the next head is its fork point) or a `gap`; the first head of a network is whatever block the
 * tracker saw first.
 */
export interface ChainListener {
  head?(network: string, block: BlockHead): void;
  reorg?(network: string, reorg: ChainReorg): void;
  /**
   * The tracker could not back-fill: heads `from..to` were never seen (more than the back-fill bound
   * behind, e.g. after every origin was down for long). The next head is `to + 1`.
   */
  gap?(network: string, from: number, to: number): void;
  /** The network's finalized block as an origin answered it (fetched while the network is in use). */
  finalized?(network: string, block: BlockHead): void;
  /** A head claim of that origin was refused (each refused header once: SPEC §20, adoption.ts). */
  refused?(network: string, poolId: string, originName: string): void;
}

/** What one origin's newHeads push delivers (HeadPushSource). */
export interface HeadPushListener {
  /** A new head the origin pushed. */
  head(header: BlockHead): void;
  /** The subscription is live (true), or lost (false: the source reconnects on its own). */
  live(up: boolean): void;
}

/**
 * newHeads subscriptions to origins' `ws_address` (gateway/upstream/ws-heads.ts implements it over the same
 * outbound policy as every connect). `subscribe` returns the function that ends the subscription.
 */
export interface HeadPushSource {
  subscribe(pool: Pool, origin: Origin, listener: HeadPushListener): () => void;
}
