/**
 * What the JSON-RPC handler (handler.ts) is built from, and the part of it a config reload (SPEC §15)
 * replaces: `RpcSettings` — the networks, `max_batch`, the log filter limits and `gateway.rate_limit`'s
 * spec (the rate-limit buckets stay).
 */
import type { ChainView } from '../../chain/types.js';
import type { Clock } from '../../clock.js';
import type { NetworkConfig } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import type { GatewayMetrics } from '../metrics.js';
import type { CallAdmissionOptions } from './admission.js';
import type { Forwarder } from './forwarder.js';
import type { LogFilterLimits } from './log-filter-limits.js';
import type { RateSpec } from './rate-limit.js';

export interface RpcHandlerOptions {
  networks: Readonly<Record<string, NetworkConfig>>;
  forwarder: Forwarder;
  clock: Clock;
  logger: Logger;
  maxBatch: number;
  /** `gateway.rate_limit` and its buckets (admission.ts). */
  rateLimit?: CallAdmissionOptions['rateLimit'];
  /** Gateway keys: their table, daily quota and usage (admission.ts). */
  keys?: CallAdmissionOptions['keys'];
  metrics?: GatewayMetrics | undefined;
  /** The chain tracker's network head, to resolve tags in eth_getLogs ranges (no head: such ranges pass). */
  chain?: Pick<ChainView, 'networkHead'> | undefined;
  /** How large an eth_getLogs / eth_newFilter filter may be (log-filter-limits.ts); none: unchecked. */
  filterLimits?: LogFilterLimits | undefined;
}

/** What a config reload changes (handler.ts `reconfigure`). */
export type RpcSettings = Pick<RpcHandlerOptions, 'networks' | 'maxBatch' | 'filterLimits'> & {
  rateSpec: RateSpec | undefined;
};
