/**
 * One tracked origin of a network as the tracker lists it (console, incident checks, the subscription
 * hub, workers' replicas): its pool and origin, its chain state and whether it counts now.
 */
import type { Origin, Pool } from '../model/pool.js';
import type { NetworkChain } from './network-chain.js';
import type { OriginChain } from './origin-chain.js';
import type { BlockHead, OriginChainState } from './types.js';

/** One tracked origin of a network, for listings (console, incident checks). */
export interface TrackedOrigin {
  readonly pool: Pool;
  readonly origin: Origin;
  readonly state: OriginChainState;
  /** Counts for the network head now: pool and origin enabled and healthy. */
  readonly usable: boolean;
  /** A live newHeads push (its `ws_address`) brings its head now; its head poll is skipped meanwhile. */
  readonly pushing: boolean;
  /** The origin's last polled or pushed header (incident divergence checks read its hash and parent). */
  readonly header?: BlockHead | undefined;
}

export function listing(chain: NetworkChain, record: OriginChain): TrackedOrigin {
  return {
    pool: record.pool,
    origin: record.origin,
    state: record,
    usable: chain.usable(record),
    pushing: record.pushLive,
    header: record.header,
  };
}
