/**
 * What route factories get from the composition root. Route files take the parts they need from it;
 * nothing here is global, so several apps can run side by side in one test process.
 */
import type { ChainView } from '../chain/types.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { OriginScoreView } from '../model/origin-score.js';
import type { OutboundPolicy } from '../outbound/policy.js';
import type { Store } from '../store/database.js';
import type { StoreSecrets } from '../store/store-secrets.js';
import type { PoolHealthSource } from './health-source.js';

export interface ApiDeps {
  config: Readonly<Config>;
  store: Store;
  /** Opens and seals the secrets held in the store (origin credentials, monitor headers, webhooks). */
  secrets: StoreSecrets;
  clock: Clock;
  logger: Logger;
  /** The outbound target policy: origin addresses and webhook URLs are checked against it. */
  outbound: OutboundPolicy;
  /** Live health for the `healthy` fields and `…/pools/{id}/health`. */
  health: PoolHealthSource;
  /**
   * Called after every committed write to pools or monitors, so in-process snapshots (the routing
   * PoolDirectory, the health checker) refresh at once instead of at their next poll. Routes await
   * it, so a client that gets the answer can use the pool on the gateway right away. Must not throw.
   */
  poolsChanged(): Promise<void>;
  /** The gateway's chain tracker (heads, earliest blocks) for the per-origin statistics; absent in some tests. */
  chain?: ChainView | undefined;
  /** Origin scores (SPEC §17), for the per-origin statistics; absent in some tests. */
  scores?: OriginScoreView | undefined;
  /** Called after every committed write to gateway keys, so the gateway's key table refreshes at once. */
  keysChanged(): Promise<void>;
}
