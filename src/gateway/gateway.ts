/**
 * The gateway: `POST /v1/{network}` on `gateway.listen` (default 127.0.0.1:8545; HTTPS when `gateway.tls` is
 * set), wired from its three layers — the HTTP edge (http/edge.ts: path, method, key, Content-Type, body size,
 * CORS; and WebSocket handshakes, ws/upgrade.ts), the JSON-RPC rules (rpc/handler.ts) and forwarding to origins
 * (upstream/origin-forwarder.ts, with the routing, feedback and origin clients it needs). The same listener
 * answers `GET /healthz` and `GET /readyz` (http/probes.ts, readiness.ts); the client a call counts against is
 * its key, else its address as http/client-address.ts reads it (`trusted_proxies`).
 *
 * No client starves the others (docs/gateway.md "No client starves the gateway"): the listener cuts stalled
 * streams (`stream_stall_timeout`) and bounds connections (`max_connections`, lowered at start to fit the
 * file-descriptor limit: listener-options.ts, fd-budget.ts; `max_connections_per_client`); origin-forwarder.ts
 * bounds streams per client (`max_streams_per_client`, stream-slots.ts) and answers GATEWAY_BUSY rather than
 * blaming an origin for the gateway's own queue.
 *
 * The chain tracker (src/chain/tracker.ts) is created by `startGateway` (chain-tracker.ts), before the router
 * and forwarder. It asks origins through upstream/chain-source.ts over origin clients of its own — the same
 * class, address model, headers and connect guard as forwarded calls, but CHAIN_CONNECTIONS_PER_ORIGIN (2)
 * sockets per origin apart from `connections_per_origin`, so head polls never queue behind client calls and
 * never take a client's keep-alive socket (the fd budget counts them). It starts polling once the listener is
 * up and stops on close. `Gateway.chain` exposes it (ChainView, ChainFeedback, listeners, finality).
 *
 * A gateway worker (SPEC §11, src/cluster/) serves the same gateway with a chain it did not build:
 * `serveGateway` takes any GatewayChain (chain-port.ts; there, a replica of the control process's tracker) and
 * starts/stops it with the listener; `startGateway` is the one-process form that builds the ChainTracker over
 * its own chain clients, as described above, and then calls it.
 *
 * One wiring for both: `serveGateway` builds every part of the gateway from the ports it is given (GatewayOptions:
 * pool directory, health view, chain, keys, limits, affinity share, statistics, the outbound policy, the ledger's
 * sends) — origin clients, routing and forwarding, the response cache (upstream/cache/caching-forwarder.ts, when
 * `gateway.cache_max_bytes` > 0, finality from the chain), the JSON-RPC handler, the subscription hub, readiness,
 * key checks and the listener. main.ts and cluster/worker.ts differ only in where those ports' state comes from.
 *
 * The subscription hub (subscriptions/hub.ts, SPEC §10) follows that tracker and calls upstream through the same
 * forwarder as clients (cache included); tests may put their own in its place (`options.subscriptions`).
 *
 * Keys (SPEC §11): static `gateway.api_keys` and gateway keys as resources (`options.keys`: key table, quota
 * counter and usage sink, from the store; without it only static keys exist) are checked by one GatewayAuth
 * (http/key-auth.ts) for HTTP and WebSocket alike; the RpcHandler applies a key's rate limit, quota and usage.
 *
 * WebSocket (SPEC §10): the same listener upgrades `GET /v1/{network}` (ws/upgrade.ts); messages go through the
 * same RpcHandler, eth_subscribe/eth_unsubscribe to the hub. Close: WebSocket connections get their answers in
 * flight and 1001 while the listener finishes its HTTP requests; then the hub closes, then the tracker stops.
 *
 * Reload (SPEC §15): `reconfigure(config, tls)` hands a reloaded config to the parts built here — the
 * JSON-RPC rules (networks, max_batch, rate_limit, filter limits), forwarding (request_timeout,
 * max_attempts, max_head_lag, max_streams_per_client, sticky_after_write), keys (api_keys, require_key),
 * readiness, the hub, WebSocket limits, the listener's limits and, with TLS, the certificate re-read by
 * the caller — and, in one process, to the chain tracker (`startGateway` owns it). Each part takes the
 * new settings for the work that starts after the call; work in flight finishes on the old. What needs
 * a restart (config/restart-keys.ts) is never changed here: the caller keeps those keys as they were.
 */

import type { ChainTracker } from '../chain/tracker.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { TlsPair } from '../config/tls-files.js';
import { BufferPool } from '../http1/index.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { GatewayKeyTable, KeyUsageSink } from '../model/gateway-keys.js';
import type { HealthView } from '../model/health-view.js';
import type { OriginStatsCollector } from '../model/origin-stats.js';
import type { PoolDirectory } from '../model/pool.js';
import type { StoreReadiness } from '../model/readiness.js';
import { type OutboundPolicy, WS_SCHEMES } from '../outbound/policy.js';
import { OriginFeedback } from '../routing/feedback.js';
import { OutstandingRequests } from '../routing/outstanding.js';
import { OriginRouter } from '../routing/router.js';
import { ScoreBook } from '../routing/scores/score-book.js';
import { OriginThrottle } from '../routing/throttling.js';
import type { GatewayChain } from './chain-port.js';
import { buildChainTracker } from './chain-tracker.js';
import { buildEdge } from './edge-parts.js';
import { AccessLog } from './http/access-log.js';
import { gatewayEdge } from './http/edge.js';
import { startListener } from './http/listener.js';
import { probeEndpoints } from './http/probes.js';
import { fittedMaxConnections, listenerOptions } from './listener-options.js';
import { GatewayMetrics } from './metrics.js';
import type { Forwarder } from './rpc/forwarder.js';
import { RpcHandler } from './rpc/handler.js';
import type { LogFilterLimits } from './rpc/log-filter-limits.js';
import type { QuotaCounter } from './rpc/quota.js';
import { type Limiter, RateLimiter } from './rpc/rate-limit.js';
import type { Subscriptions } from './rpc/subscriptions-port.js';
import { adjustListener, forwardingSettings, rpcSettings } from './settings.js';
import { SubscriptionHub } from './subscriptions/hub.js';
import type { AffinityShare } from './upstream/affinity-share.js';
import { CachingForwarder } from './upstream/cache/caching-forwarder.js';
import { CHAIN_REQUEST_TIMEOUT_MS } from './upstream/chain-source.js';
import { FilterAffinity } from './upstream/filter-affinity.js';
import { OriginClients } from './upstream/origin-clients.js';
import { OriginForwarder, type OriginForwarderDeps } from './upstream/origin-forwarder.js';
import { StreamSlots } from './upstream/stream-slots.js';
import { WriteAffinity } from './upstream/write-affinity.js';
import { WsOriginFeeds } from './upstream/ws-heads.js';

/** What the subscription hub is made from (gateway/subscriptions/hub.ts constructor). */
export interface SubscriptionDeps {
  chain: GatewayChain;
  forwarder: Forwarder;
  networks: Config['networks'];
  /** How large a logs filter may be (`gateway.websocket.max_filter_*`). */
  filterLimits: LogFilterLimits;
  clock: Clock;
  logger: Logger;
}

export interface GatewayOptions {
  config: Readonly<Config>;
  directory: PoolDirectory;
  health: HealthView;
  /** Whether the store answers, for `GET /readyz` (store/probe.ts in the serving process). */
  storeReadiness: StoreReadiness;
  clock: Clock;
  logger: Logger;
  /** Where gateway metrics go (the API's /metrics); none when absent. */
  metrics?: MetricsRegistry;
  /** The outbound target policy every origin connect follows (built once from the config: main.ts). */
  outbound: OutboundPolicy;
  /**
   * The read buffers large answers pass through, from the origin clients to the listener (default: a
   * new pool). Tests only: to watch its recycling.
   */
  buffers?: BufferPool;
  /** The rate limiter's buckets (default: local to this process, rpc/rate-limit.ts RateLimiter). */
  limiter?: Limiter;
  /** Makes the subscription hub eth_subscribe goes to in place of subscriptions/hub.ts (tests only). */
  subscriptions?: (deps: SubscriptionDeps) => GatewayHub;
  /** Gateway keys as resources: the table authenticated against, their daily quotas and usage. */
  keys?: { table: GatewayKeyTable; quota: QuotaCounter; usage: KeyUsageSink };
  /**
   * Per-origin statistics (stats/origin-stats.ts): each attempt on an origin is counted there. With
   * workers, the control process adds the workers' reports (topic `origin-stats`) to it.
   */
  stats?: OriginStatsCollector;
  /**
   * Origin scores (SPEC §17: steering, hedging, the score metric and API): the process's book
   * (main/serving-parts.ts `startOriginScores`; the health step adds the probes' outcomes), or a
   * worker's reporting one (cluster/worker-parts.ts). Default: a book of its own.
   */
  scores?: ScoreBook;
  /**
   * Where read-your-writes and filter affinity are shared with the other processes serving this gateway
   * (upstream/affinity-share.ts; a worker's goes through the control process). None: this process's own.
   */
  affinityShare?: AffinityShare;
  /** The transaction ledger (SPEC §19): each accepted send, once (upstream/accepted-sends.ts). None: unrecorded. */
  sends?: OriginForwarderDeps['sends'];
  /** Answers that failed verification (SPEC §18), for the integrity alert; none: only counted and logged. */
  verifyFailures?: OriginForwarderDeps['verifyFailures'];
}

/** The subscription hub as the gateway holds it (a test's own may not follow reloads). */
type GatewayHub = Subscriptions & {
  close(): void;
  reconfigure?(settings: Pick<SubscriptionDeps, 'networks' | 'filterLimits'>): void;
};

/** A gateway served with a chain it was given (a worker's replica); it starts and stops that chain. */
export interface ServeGatewayOptions extends GatewayOptions {
  chain: GatewayChain;
}

export interface Gateway extends ServedGateway {
  /** The chain tracker of the configured networks (SPEC §9). */
  readonly chain: ChainTracker;
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  // One pool for both halves: origin sockets read large answers into it, the listener releases them.
  const buffers = options.buffers ?? new BufferPool();
  const own = buildChainTracker({ ...options, buffers });
  const chain = own.chain;
  let served: ServedGateway;
  try {
    served = await serveGateway({ ...options, buffers, chain });
  } catch (err) {
    await own.close();
    throw err;
  }
  return {
    url: served.url,
    chain,
    reconfigure: (config, tls) => {
      chain.reconfigure(config.networks);
      served.reconfigure(config, tls);
    },
    close: async (graceMs) => {
      await served.close(graceMs);
      await own.close();
    },
  };
}

/** A gateway serving over a chain it was given. */
export interface ServedGateway {
  readonly url: string;
  /**
   * A reloaded config (its restart-only keys as they were: config/restart-keys.ts) and, with
   * `gateway.tls`, the certificate and key read again from its files: see the header.
   */
  reconfigure(config: Readonly<Config>, tls: TlsPair | undefined): void;
  close(graceMs: number): Promise<void>;
}

/**
 * The gateway over a chain it was given: the listener, JSON-RPC rules and forwarding (the body of
 * `startGateway`). Starts `chain` once the listener is up; `close` stops it after the hub.
 */
export async function serveGateway(options: ServeGatewayOptions): Promise<ServedGateway> {
  const { logger, chain } = options;
  const metrics = new GatewayMetrics(options.metrics, Object.keys(options.config.networks));
  const buffers = options.buffers ?? new BufferPool();
  const upstream = buildUpstream(options, metrics, buffers);
  const handler = buildHandler(options, upstream.forwarder, metrics);
  const hub = buildSubscriptionHub(options, upstream.forwarder);
  const accessLog = new AccessLog(options.config.gateway.access_log, logger);
  const edge = buildEdge(options, handler, hub, accessLog);
  const listener = await startListener(
    listenerOptions(options, edge.trustedProxies, metrics, buffers),
    gatewayEdge({
      handler,
      auth: edge.auth,
      trustedProxies: edge.trustedProxies,
      probes: probeEndpoints(edge.readiness, logger),
      metrics,
      logger,
      accessLog,
      streamStallMs: options.config.gateway.stream_stall_timeout,
      upgrade: (exchange, socket, rest) => edge.websocket.upgrade(exchange, socket, rest),
    }),
  );
  logger.info('gateway listening', { url: listener.url });
  chain.start();
  const reconfigure = (config: Readonly<Config>, tls: TlsPair | undefined): void => {
    metrics.addNetworks(Object.keys(config.networks));
    accessLog.setMode(config.gateway.access_log);
    upstream.reconfigure(config);
    handler.reconfigure(rpcSettings(config));
    hub.reconfigure?.({ networks: config.networks, filterLimits: config.gateway.websocket });
    edge.reconfigure(config);
    adjustListener(listener, config, fittedMaxConnections({ ...options, config }), tls);
  };
  return {
    url: listener.url,
    reconfigure,
    close: async (graceMs) => {
      await Promise.all([edge.websocket.close(), listener.close(graceMs)]);
      hub.close();
      chain.stop();
      await upstream.close();
    },
  };
}

/** Forwarding to origins: origin clients, feedback, routing, the origin forwarder and the response cache. */
function buildUpstream(
  options: ServeGatewayOptions,
  metrics: GatewayMetrics,
  buffers: BufferPool,
): { forwarder: Forwarder; reconfigure(config: Readonly<Config>): void; close(): Promise<void> } {
  const { config, clock, chain, directory, outbound } = options;
  const settings = config.gateway;
  const clients = new OriginClients({
    connectionsPerOrigin: settings.connections_per_origin,
    connectTimeoutMs: Math.min(settings.request_timeout, 10_000),
    // Only the routing account's pools are routed, so its outbound rules apply to every origin connect.
    guard: outbound.connectGuard(outbound.rulesFor(config.account_id)),
    buffers,
  });
  // Attempt outcomes go to one place: it demotes unreachable origins (read by the router) and tells the HealthView.
  const feedback = new OriginFeedback(options.health, clock);
  const outstanding = new OutstandingRequests();
  const scores = options.scores ?? new ScoreBook(clock);
  // Each of `workers` processes holds its share of an origin's max_requests_per_second (throttling.ts).
  const throttle = new OriginThrottle(clock, 1 / settings.workers);
  // The config in force: the router reads the networks' steering per call (a reload replaces it).
  let current = config;
  const router = buildRouter(options, feedback, outstanding, { scores, throttle }, () => current);
  const streamSlots = new StreamSlots(settings.max_streams_per_client);
  const writes = new WriteAffinity(clock, settings.sticky_after_write, { share: options.affinityShare });
  const origins = new OriginForwarder({
    router,
    clients,
    feedback,
    outstanding,
    filters: new FilterAffinity(clock, { share: options.affinityShare }),
    metrics,
    logger: options.logger,
    streamSlots,
    ...forwardingSettings(config),
    clock,
    chain,
    writes,
    stats: options.stats,
    scores,
    throttle,
    sends: options.sends,
    verifyFailures: options.verifyFailures,
  });
  const caching = buildCache(options, origins);
  const unsubscribe = directory.onChange(() => {
    const pools = directory.allPools();
    clients.prune(pools.flatMap((pool) => pool.origins));
    scores.prune(pools);
  });
  return {
    forwarder: caching ?? origins,
    reconfigure: (next) => {
      current = next;
      router.setExploration(next.gateway.steering_exploration);
      origins.reconfigure(forwardingSettings(next));
      streamSlots.resize(next.gateway.max_streams_per_client);
      writes.setTtl(next.gateway.sticky_after_write);
    },
    close: async () => {
      unsubscribe();
      await clients.close();
      caching?.close();
    },
  };
}

/** Immutable reads answered from memory (`gateway.cache_max_bytes` > 0); finality from the chain (a worker's: its replica). */
function buildCache(options: ServeGatewayOptions, origins: Forwarder): CachingForwarder | undefined {
  const maxBytes = options.config.gateway.cache_max_bytes;
  if (maxBytes <= 0) return undefined;
  return new CachingForwarder(origins, {
    maxBytes,
    chain: options.chain,
    logger: options.logger.child({ part: 'cache' }),
    ...(options.metrics !== undefined && { metrics: options.metrics }),
  });
}

/** The router, steering by the networks' and pools' policies over scores, throttling and demotion. */
function buildRouter(
  options: ServeGatewayOptions,
  feedback: OriginFeedback,
  outstanding: OutstandingRequests,
  steering: { scores: ScoreBook; throttle: OriginThrottle },
  current: () => Readonly<Config>,
): OriginRouter {
  const { config, clock } = options;
  return new OriginRouter({
    directory: options.directory,
    health: options.health,
    demotion: feedback.demotion,
    outstanding,
    ...steering,
    networkSteering: (network) => current().networks[network]?.steering ?? 'off',
    exploration: config.gateway.steering_exploration,
    clock,
  });
}

/** The JSON-RPC rules: networks, batches, rate limits (always a limiter: a key's own rate_limit applies). */
function buildHandler(options: ServeGatewayOptions, forwarder: Forwarder, metrics: GatewayMetrics): RpcHandler {
  const { clock } = options;
  const { rateSpec: spec, ...settings } = rpcSettings(options.config);
  return new RpcHandler({
    ...settings,
    forwarder,
    clock,
    logger: options.logger,
    metrics,
    rateLimit: { spec, limiter: options.limiter ?? new RateLimiter(clock) },
    keys: options.keys,
    chain: options.chain,
  });
}

/** eth_subscribe's hub (or the one a test makes); pending transactions from origins' ws_address. */
function buildSubscriptionHub(options: ServeGatewayOptions, forwarder: Forwarder): GatewayHub {
  const { config, outbound, logger } = options;
  const deps: SubscriptionDeps = {
    chain: options.chain,
    forwarder,
    networks: config.networks,
    filterLimits: config.gateway.websocket,
    clock: options.clock,
    logger: logger.child({ part: 'subscriptions' }),
  };
  if (options.subscriptions !== undefined) return options.subscriptions(deps);
  return new SubscriptionHub({
    ...deps,
    // newPendingTransactions from an origin's ws_address, under the same ws/wss connect rules as head pushes.
    originFeeds: new WsOriginFeeds({
      guard: outbound.connectGuard(outbound.rulesFor(config.account_id, { schemes: WS_SCHEMES })),
      logger: logger.child({ part: 'subscriptions' }),
      timeoutMs: Math.min(config.gateway.request_timeout, CHAIN_REQUEST_TIMEOUT_MS),
    }),
  });
}
