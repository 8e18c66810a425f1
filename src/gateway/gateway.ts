/**
 * The gateway: `POST /v1/{network}` on `gateway.listen` (default 127.0.0.1:8545; HTTPS when
 * `gateway.tls` is set), wired from its three layers — the HTTP edge (http/edge.ts: path, method, key,
 * Content-Type, body size, CORS), the JSON-RPC rules (rpc/handler.ts) and forwarding to origins
 * (upstream/origin-forwarder.ts, with the routing, feedback and origin clients it needs).
 *
 * No client starves the others (docs/gateway.md "No client starves the gateway"): the listener cuts
 * stalled streams (`stream_stall_timeout`) and bounds connections (`max_connections`, lowered at start
 * to fit the file-descriptor limit: fd-budget.ts; `max_connections_per_client`); origin-forwarder.ts bounds
 * streams per client (`max_streams_per_client`, stream-slots.ts) and answers GATEWAY_BUSY rather than
 * blaming an origin for the gateway's own queue.
 */

import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { BufferPool } from '../http1/index.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { HealthView } from '../model/health-view.js';
import type { PoolDirectory } from '../model/pool.js';
import { OutboundPolicy } from '../outbound/policy.js';
import { OriginFeedback } from '../routing/feedback.js';
import { OutstandingRequests } from '../routing/outstanding.js';
import { OriginRouter } from '../routing/router.js';
import { connectionBudget, openFilesLimit } from './fd-budget.js';
import { ApiKeys } from './http/api-keys.js';
import { gatewayEdge } from './http/edge.js';
import { startListener } from './http/listener.js';
import { GatewayMetrics } from './metrics.js';
import type { Forwarder } from './rpc/forwarder.js';
import { RpcHandler } from './rpc/handler.js';
import { RateLimiter } from './rpc/rate-limit.js';
import { FilterAffinity } from './upstream/filter-affinity.js';
import { OriginClients, originEndpoints } from './upstream/origin-clients.js';
import { OriginForwarder } from './upstream/origin-forwarder.js';
import { StreamSlots } from './upstream/stream-slots.js';
import { WriteAffinity } from './upstream/write-affinity.js';

export interface GatewayOptions {
  config: Readonly<Config>;
  directory: PoolDirectory;
  health: HealthView;
  clock: Clock;
  logger: Logger;
  /** Where gateway metrics go (the API's /metrics); none when absent. */
  metrics?: MetricsRegistry;
  /** The outbound target policy origin connects follow (default: from `outbound.trusted_accounts`). */
  outbound?: OutboundPolicy;
  /** Wraps the origin forwarder, e.g. with a response cache (issue 7). */
  wrapForwarder?: (inner: Forwarder) => Forwarder;
  /**
   * The read buffers large answers pass through, from the origin clients to the listener (default: a
   * new pool). Tests only: to watch its recycling.
   */
  buffers?: BufferPool;
}

export interface Gateway {
  readonly url: string;
  close(graceMs: number): Promise<void>;
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, logger, clock } = options;
  const settings = config.gateway;
  const metrics = new GatewayMetrics(options.metrics, Object.keys(config.networks));
  // Only the routing account's pools are routed, so its outbound rules apply to every origin connect.
  const outbound = options.outbound ?? new OutboundPolicy({ trustedAccounts: config.outbound.trusted_accounts });
  // One pool for both halves: origin sockets read large answers into it, the listener releases them.
  const buffers = options.buffers ?? new BufferPool();
  const clients = new OriginClients({
    connectionsPerOrigin: settings.connections_per_origin,
    connectTimeoutMs: Math.min(settings.request_timeout, 10_000),
    guard: outbound.connectGuard(outbound.rulesFor(config.account_id)),
    buffers,
  });
  // Attempt outcomes go to one place: it demotes unreachable origins (read by the router) and tells the HealthView.
  const feedback = new OriginFeedback(options.health, clock);
  const outstanding = new OutstandingRequests();
  const router = new OriginRouter({
    directory: options.directory,
    health: options.health,
    demotion: feedback.demotion,
    outstanding,
  });
  const origins = new OriginForwarder({
    router,
    clients,
    feedback,
    outstanding,
    filters: new FilterAffinity(clock),
    metrics,
    logger,
    streamSlots: new StreamSlots(settings.max_streams_per_client),
    requestTimeoutMs: settings.request_timeout,
    maxAttempts: settings.max_attempts,
    writes: new WriteAffinity(clock, settings.sticky_after_write),
    networks: config.networks,
  });
  const forwarder = options.wrapForwarder ? options.wrapForwarder(origins) : origins;
  const handler = new RpcHandler({
    networks: config.networks,
    forwarder,
    clock,
    logger,
    maxBatch: settings.max_batch,
    metrics,
    rateLimiter: settings.rate_limit ? new RateLimiter(settings.rate_limit, clock) : undefined,
  });
  const apiKeys = settings.api_keys ? new ApiKeys(settings.api_keys) : undefined;
  const unsubscribe = options.directory.onChange(() =>
    clients.prune(options.directory.allPools().flatMap((pool) => pool.origins)),
  );

  const fdLimit = openFilesLimit();
  const budget = connectionBudget({
    configured: settings.max_connections,
    fdLimit,
    originConnections:
      settings.connections_per_origin * originEndpoints(options.directory.allPools().flatMap((pool) => pool.origins)),
  });
  if (budget.lowered) {
    logger.warn(
      `gateway.max_connections lowered to ${budget.maxConnections}: the process may open ${fdLimit} files ` +
        `(RLIMIT_NOFILE) and keeps ${budget.reserve} for the API listener, the store and origin connections; ` +
        'raise the limit (ulimit -n, LimitNOFILE=) to allow more',
      {
        max_connections: budget.maxConnections,
        configured: settings.max_connections,
        fd_limit: fdLimit,
        reserve: budget.reserve,
      },
    );
  }

  const listener = await startListener(
    {
      listen: settings.listen,
      tls: settings.tls,
      maxBodyBytes: settings.max_body_bytes,
      streamStallMs: settings.stream_stall_timeout,
      maxConnections: budget.maxConnections,
      maxConnectionsPerClient: settings.max_connections_per_client,
      refused: (limit) => metrics.connectionRefused(limit),
      buffers,
    },
    gatewayEdge({ handler, apiKeys, metrics, logger, streamStallMs: settings.stream_stall_timeout }),
  );
  logger.info('gateway listening', { url: listener.url });
  return {
    url: listener.url,
    close: async (graceMs) => {
      await listener.close(graceMs);
      unsubscribe();
      await clients.close();
    },
  };
}
