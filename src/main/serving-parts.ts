/**
 * Start-up steps of what serves (main.ts calls them in this order): the origin scores, health monitors,
 * the global limits (Redis), the gateway — in this process, or its workers' control (SPEC §11) — and the
 * management API.
 */
import { API_BASE_PATH, createApiServer } from '../api/api-server.js';
import type { Route } from '../api/route-table.js';
import { coreRoutes } from '../api/routes/index.js';
import type { ChainFeedback, ChainView } from '../chain/types.js';
import { type GatewayWorkers, type GatewayWorkersOptions, startGatewayWorkers } from '../cluster/control.js';
import type { Config } from '../config/schema.js';
import type { TlsPair } from '../config/tls-files.js';
import { type Gateway, type GatewayOptions, startGateway } from '../gateway/gateway.js';
import type { OriginStats } from '../gateway/origin-stats.js';
import type { LeaseBackend } from '../gateway/rpc/lease-backend.js';
import type { QuotaCounter } from '../gateway/rpc/quota.js';
import type { QuotaBackend } from '../gateway/rpc/quota-backend.js';
import type { Limiter } from '../gateway/rpc/rate-limit.js';
import type { AffinityShare } from '../gateway/upstream/affinity-share.js';
import { HealthMonitor } from '../health/monitor.js';
import { probeScore } from '../health/probes/result.js';
import type { AcceptedSends } from '../model/accepted-sends.js';
import type { ChangeBus } from '../model/change-bus.js';
import type { StorePoolDirectory } from '../pools/store-directory.js';
import { ScoreBook } from '../routing/scores/score-book.js';
import { registerScoreMetric } from '../routing/scores/score-metric.js';
import type { Store } from '../store/database.js';
import { StoreProbe } from '../store/probe.js';
import type { StoreSecrets } from '../store/store-secrets.js';
import type { LiveParts } from './live.js';
import { bound, type StartUp } from './start-up.js';
import type { GatewayKeys } from './store-parts.js';

/**
 * Origin scores (SPEC §17): live attempts (the gateway's, or every worker's reports) and the monitors'
 * probes; steering and hedging read them, so do /metrics (`switchyard_origin_score`) and the origin
 * stats API. With workers this book is the control's: it relays the probes' outcomes to them.
 */
export function startOriginScores(s: StartUp, directory: StorePoolDirectory, live: LiveParts): ScoreBook {
  const scores = new ScoreBook(s.clock, { relaying: s.config.gateway.workers > 1 });
  registerScoreMetric(s.metrics, scores, () => live.config.networks, directory);
  return scores;
}

/**
 * Health: monitors probe the pools' origins; the gateway routes by their view, the API shows it. Events
 * this process records wake the notification service (so alerts go out at once; its poll still picks up
 * other processes' events); what probes reveal of an origin's head goes to `sawHead` (the gateway's
 * chain tracker, once it runs), and `max_block_lag` is judged against the head it adopted (`adoptedHead`);
 * each check's outcome and round trip go into the origin scores.
 */
export async function startHealth(
  s: StartUp,
  store: Store,
  secrets: StoreSecrets,
  directory: StorePoolDirectory,
  live: LiveParts,
  scores: ScoreBook,
  chain: { sawHead: ChainFeedback['sawHead']; adoptedHead: ChainView['networkHead'] },
): Promise<HealthMonitor> {
  const monitor = new HealthMonitor({
    store,
    secrets,
    directory,
    routingAccountId: s.config.account_id,
    // Read at each round: the networks in force (a reload replaces them: the chain ids a pool must report).
    get networks() {
      return live.config.networks;
    },
    clock: s.clock,
    logger: s.part('health'),
    metrics: s.metrics,
    outbound: live.outbound,
    onEvents: () => live.wakeNotifications(),
    onBlockNumber: chain.sawHead,
    adoptedHead: chain.adoptedHead,
    onProbe: (poolId, originName, result) => scores.probe(poolId, originName, probeScore(result), result.rtt_ms ?? 0),
  });
  await monitor.start();
  s.onStop(() => monitor.stop());
  return monitor;
}

/** The gateway's limits as this process serves them: local, or leased from Redis (`redis_url`). */
export interface Limits {
  /** Rate-limit buckets (none: the gateway's own, in this process). */
  readonly limiter: Limiter | undefined;
  readonly keyQuota: QuotaCounter;
  /** Change notices between instances (with Redis). */
  readonly bus: ChangeBus | undefined;
  /** Read-your-writes and filter affinity between instances (with Redis). */
  readonly affinityShare: AffinityShare | undefined;
  /** Where workers lease buckets and reserve quota (with workers: Redis's, else this process's). */
  readonly forWorkers: { leases: LeaseBackend | undefined; quotas: QuotaBackend | undefined };
}

/**
 * Global limits (SPEC §11): with `redis_url`, rate-limit buckets and key quotas are leased from Redis
 * (this process's counts decide while it is down), and key changes are announced on its bus so every
 * instance re-reads its key table at once (the 250 ms poll stays the fallback).
 */
export async function startLimits(s: StartUp, keys: GatewayKeys): Promise<Limits> {
  if (s.config.redis_url === undefined) {
    return {
      limiter: undefined,
      keyQuota: keys.quota,
      bus: undefined,
      affinityShare: undefined,
      forWorkers: { leases: undefined, quotas: keys.workerQuotas },
    };
  }
  // Loaded only when used: the Redis client is a large module graph every other start would load.
  const { sharedLimits } = await import('../limits/shared-limits.js');
  const limits = await sharedLimits(s.config.redis_url, {
    clock: s.clock,
    logger: s.part('limits'),
    metrics: s.metrics,
    seeds: keys.quota,
  });
  s.onStop(() => limits.close());
  const unsubscribe = limits.bus.subscribe('keys', () => void keys.table.refresh());
  s.onStop(() => unsubscribe());
  return {
    limiter: limits.limiter,
    keyQuota: limits.quota(keys.quota),
    bus: limits.bus,
    affinityShare: limits.affinity,
    forWorkers: { leases: limits.leases, quotas: limits.quotas },
  };
}

/** What the gateway is built from (all the ports gateway/gateway.ts `serveGateway` reads). */
export interface GatewayParts {
  store: Store;
  /** Opens and seals the secrets the store holds: the API's pools, monitors and webhook destinations. */
  secrets: StoreSecrets;
  directory: StorePoolDirectory;
  monitor: HealthMonitor;
  keys: GatewayKeys;
  stats: OriginStats;
  scores: ScoreBook;
  limits: Limits;
  live: LiveParts;
  /** The transaction ledger's port: every accepted send (with workers: relayed by the control). */
  sends: AcceptedSends;
}

/** The one-process gateway, or (`gateway.workers` > 1) the control process of worker processes. */
export type RunningGateway = Gateway & Partial<Pick<GatewayWorkers, 'renderMetrics'>>;

/**
 * The gateway listener. With `gateway.workers` > 1 worker processes serve it, fed from here
 * (cluster/control.ts: this process keeps the chain tracker; each worker builds its own gateway and
 * cache through the same `serveGateway`), and lease their limits from `limits.forWorkers`; in one
 * process the limiter and quota counter already lease from Redis when there is one.
 */
export async function startGatewayListener(s: StartUp, parts: GatewayParts): Promise<RunningGateway> {
  const { config, options } = s;
  const gateway: GatewayOptions = {
    config,
    directory: parts.directory,
    health: parts.monitor.view,
    storeReadiness: new StoreProbe(parts.store, { clock: s.clock }),
    clock: s.clock,
    logger: s.part('gateway'),
    metrics: s.metrics,
    outbound: parts.live.outbound,
    keys: { table: parts.keys.table, quota: parts.limits.keyQuota, usage: parts.keys.usage },
    stats: parts.stats,
    scores: parts.scores,
    sends: parts.sends,
    // Answers that failed verification → the integrity alert in force (main/alerts.ts, started later).
    verifyFailures: { failed: (report) => parts.live.integrity?.failed(report) },
    ...(options.buffers !== undefined && { buffers: options.buffers }),
    ...(parts.limits.limiter !== undefined && { limiter: parts.limits.limiter }),
    // Read-your-writes and filter affinity between instances (with workers: relayed by the control).
    ...(parts.limits.affinityShare !== undefined && { affinityShare: parts.limits.affinityShare }),
    ...(options.subscriptions !== undefined && { subscriptions: options.subscriptions }),
  };
  const { leases, quotas } = parts.limits.forWorkers;
  const workers: GatewayWorkersOptions = {
    ...gateway,
    ...(leases !== undefined && { leases }),
    ...(quotas !== undefined && { quotas }),
  };
  const starting = config.gateway.workers > 1 ? startGatewayWorkers(workers) : startGateway(gateway);
  const served: RunningGateway = await bound(
    'gateway.listen',
    config.gateway.listen,
    options.sources?.['gateway.listen'],
    starting,
  );
  // The grace in force when it closes (`shutdown_grace` reloads live).
  s.onClose(() => served.close(parts.live.config.shutdown_grace));
  return served;
}

/** The management API as main.ts holds it: its base URL, and how a reload reaches it. */
export interface RunningApi {
  /** e.g. http://127.0.0.1:8787/client/v4 */
  readonly url: string;
  /** A reloaded config: the routes are made again from it; with `api.tls`, the pair read again. */
  reconfigure(config: Readonly<Config>, tls: TlsPair | undefined): void;
}

/** The management API listener (its routes made from the config in force: `live.config`). */
export async function startApi(s: StartUp, parts: GatewayParts, gateway: RunningGateway): Promise<RunningApi> {
  const { clock } = s;
  const store = parts.store;
  const routes = (config: Readonly<Config>): Route[] =>
    coreRoutes({
      config,
      store,
      secrets: parts.secrets,
      clock,
      logger: s.part('api'),
      health: parts.monitor,
      chain: gateway.chain,
      scores: parts.scores,
      outbound: parts.live.outbound,
      poolsChanged: () => parts.directory.refresh(),
      keysChanged: async () => {
        await parts.keys.table.refresh();
        parts.limits.bus?.publish('keys');
      },
    });
  const config = parts.live.config;
  const api = createApiServer({
    config,
    store,
    clock,
    logger: s.logger,
    metrics: s.metrics,
    // With workers: this process's metrics and every worker's, summed.
    ...(gateway.renderMetrics !== undefined && { renderMetrics: gateway.renderMetrics }),
    routes: routes(config),
  });
  const url = `${await bound('api.listen', config.api.listen, s.options.sources?.['api.listen'], api.listen())}${API_BASE_PATH}`;
  s.onClose(() => api.close());
  return { url, reconfigure: (next, tls) => api.reconfigure(next, routes(next), tls) };
}
