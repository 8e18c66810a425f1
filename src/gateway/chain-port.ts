/**
 * What the gateway uses of the chain tracker (SPEC §9), as one port, so the gateway can be served with
 * a tracker it did not build: in one process it is the ChainTracker itself (gateway.ts builds it); in a
 * gateway worker (SPEC §11, src/cluster/) it is a replica fed by the control process's tracker.
 *
 *   ChainView + ChainFeedback  routing and answer checks (upstream/origin-forwarder.ts, rpc/handler.ts)
 *   ChainBlocks                the response cache's finality (upstream/cache/chain-finality.ts)
 *   addListener, trackedOrigins the subscription hub (subscriptions/hub.ts)
 *   TrustAnchor, finalized     answer verification (upstream/verified/, SPEC §18)
 *   start, stop                the gateway starts it once its listener is up and stops it on close
 */
import type { TrackedOrigin } from '../chain/tracker.js';
import type { BlockHead, ChainFeedback, ChainView, TrustAnchor } from '../chain/types.js';
import type { ChainBlocks } from './upstream/cache/chain-finality.js';

export interface GatewayChain extends ChainView, ChainFeedback, ChainBlocks, TrustAnchor {
  /** The finalized block last fetched for the network (verified calls at `safe` / `finalized`). */
  finalized(network: string): BlockHead | undefined;
  /** The origins followed for a network, with their state and whether they count for the head now. */
  trackedOrigins(network: string): TrackedOrigin[];
  start(): void;
  stop(): void;
}
