/**
 * The gateway's own chain tracker (SPEC §9), built over chain clients of its own: the same class,
 * address model, headers and connect guard as forwarded calls, but CHAIN_CONNECTIONS_PER_ORIGIN (2)
 * sockets per origin apart from `connections_per_origin`, so head polls never queue behind client calls.
 * Origins with a `ws_address` push their heads over the same outbound rules (ws/wss).
 *
 * Used by `startGateway` (one process) and, with `gateway.workers` > 1, by the control process, whose
 * tracker feeds the workers' replicas (src/cluster/). The tracker is not started here; `close` stops
 * following the directory's changes and closes the chain clients (stop the tracker first).
 * The tracker's trust anchor (SPEC §18, chain/network-anchor.ts) hashes headers with verify/'s
 * computation (`hashHeader`): a header that does not parse, or does not hash to its own `hash`, vouches
 * for nothing.
 */
import { ChainTracker } from '../chain/tracker.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { BufferPool } from '../http1/index.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { HealthView } from '../model/health-view.js';
import type { PoolDirectory } from '../model/pool.js';
import { type OutboundPolicy, WS_SCHEMES } from '../outbound/policy.js';
import { proveHeader } from '../verify/index.js';
import { CHAIN_CONNECTIONS_PER_ORIGIN, CHAIN_REQUEST_TIMEOUT_MS, GatewayChainSource } from './upstream/chain-source.js';
import { OriginClients } from './upstream/origin-clients.js';
import { WsHeadSubscriptions } from './upstream/ws-heads.js';

export interface ChainTrackerParts {
  config: Readonly<Config>;
  directory: PoolDirectory;
  health: HealthView;
  clock: Clock;
  logger: Logger;
  metrics?: MetricsRegistry | undefined;
  outbound: OutboundPolicy;
  buffers: BufferPool;
}

export function buildChainTracker(parts: ChainTrackerParts): { chain: ChainTracker; close(): Promise<void> } {
  const { config, directory, outbound, logger } = parts;
  const settings = config.gateway;
  const timeoutMs = Math.min(settings.request_timeout, CHAIN_REQUEST_TIMEOUT_MS);
  const chainClients = new OriginClients({
    connectionsPerOrigin: CHAIN_CONNECTIONS_PER_ORIGIN,
    connectTimeoutMs: timeoutMs,
    guard: outbound.connectGuard(outbound.rulesFor(config.account_id)),
    buffers: parts.buffers,
  });
  const chain = new ChainTracker({
    networks: config.networks,
    directory,
    health: parts.health,
    source: new GatewayChainSource({ clients: chainClients, timeoutMs }),
    pushes: new WsHeadSubscriptions({
      guard: outbound.connectGuard(outbound.rulesFor(config.account_id, { schemes: WS_SCHEMES })),
      logger: logger.child({ part: 'chain' }),
      timeoutMs,
    }),
    clock: parts.clock,
    logger: logger.child({ part: 'chain' }),
    hashHeader,
    ...(parts.metrics === undefined ? {} : { metrics: parts.metrics }),
  });
  const unsubscribe = directory.onChange(() => {
    chainClients.prune(directory.allPools().flatMap((pool) => pool.origins));
  });
  return {
    chain,
    close: async () => {
      unsubscribe();
      await chainClients.close();
    },
  };
}

/** A header's own hash, once its fields are shown to hash to it; undefined otherwise. */
function hashHeader(header: Readonly<Record<string, unknown>>): string | undefined {
  try {
    return proveHeader(header).hash.toLowerCase();
  } catch {
    return undefined;
  }
}
