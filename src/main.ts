/**
 * The composition root: config → store → devnet → pool directory + gateway keys + health → gateway → API.
 * Nothing else wires parts together (the CLI only calls this). Start-up failures undo what was started;
 * `close()` first closes both listeners together (stop accepting, finish in-flight requests within
 * `shutdown_grace`), then stops the rest in reverse order of start: background work, then child
 * processes, then the store. With `redis_url`, the gateway's rate limits are leased from Redis and shared
 * by every instance (limits/shared-limits.ts, SPEC §11).
 *
 * With `gateway.workers` > 1 (SPEC §11) this process is the control process: everything above runs here
 * except the gateway listener, which worker processes serve (cluster/control.ts starts them and feeds
 * them pools, health and chain state); `/metrics` then sums this process's metrics and theirs.
 */

import { API_BASE_PATH, createApiServer } from './api/api-server.js';
import { coreRoutes } from './api/routes/index.js';
import type { ChainTracker } from './chain/tracker.js';
import type { ChainFeedback, ChainView } from './chain/types.js';
import { type Clock, systemClock } from './clock.js';
import { type GatewayWorkers, startGatewayWorkers } from './cluster/control.js';
import type { SettingSource, SettingSources } from './config/overrides.js';
import type { Config } from './config/schema.js';
import { seedDevnetAlertPolicy } from './devnet/alert-policy.js';
import { type Devnet, startDevnet } from './devnet/devnet.js';
import { devnetOnDemandHeads } from './devnet/idle-heads.js';
import type { GatewayChain } from './gateway/chain-port.js';
import { type Gateway, type GatewayOptions, startGateway } from './gateway/gateway.js';
import { OriginStats } from './gateway/origin-stats.js';
import type { Forwarder } from './gateway/rpc/forwarder.js';
import type { LeaseBackend } from './gateway/rpc/lease-backend.js';
import { LocalQuotaCounter, type QuotaCounter } from './gateway/rpc/quota.js';
import type { QuotaBackend } from './gateway/rpc/quota-backend.js';
import type { Limiter } from './gateway/rpc/rate-limit.js';
import type { AffinityShare } from './gateway/upstream/affinity-share.js';
import { CachingForwarder } from './gateway/upstream/cache/caching-forwarder.js';
import { HealthMonitor } from './health/monitor.js';
import type { BufferPool } from './http1/index.js';
import { IncidentDetector } from './incidents/detector.js';
import { StoreKeyDirectory } from './keys/store-key-directory.js';
import { UsageRecorder } from './keys/usage-recorder.js';
import { LocalQuotaBackend } from './limits/local-backend.js';
import { createLogger, type Logger, logFormatFor } from './log.js';
import { registerBuildInfo } from './metrics/build-info.js';
import { registerProcessMetrics } from './metrics/process.js';
import { MetricsRegistry } from './metrics/registry.js';
import type { ChangeBus } from './model/change-bus.js';
import type { HealthView } from './model/health-view.js';
import type { PoolDirectory } from './model/pool.js';
import { NotificationService } from './notifications/service.js';
import { OutboundPolicy, type Resolver } from './outbound/policy.js';
import { poolsFromFile } from './pools/from-file.js';
import { StorePoolDirectory } from './pools/store-directory.js';
import { StatsRecorder } from './stats/recorder.js';
import { ClockOffsetCheck } from './store/clock-offset.js';
import { openStore, type Store } from './store/database.js';
import { StoreProbe } from './store/probe.js';

export interface SwitchyardOptions {
  config: Readonly<Config>;
  clock?: Clock;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
  /** Resolves names for the outbound target policy (default: the system's DNS); tests inject answers. */
  resolve?: Resolver;
  /** The gateway's read buffers for large answers (default: its own); tests inject one to watch it. */
  buffers?: BufferPool;
  /** Makes the gateway's subscription hub (gateway.ts `subscriptions`); tests inject a small one. */
  subscriptions?: GatewayOptions['subscriptions'];
  /** Where the listen addresses came from (flag, environment, file), named when one cannot bind. */
  sources?: Pick<SettingSources, 'gateway.listen' | 'api.listen'>;
}

export interface Switchyard {
  /** e.g. http://127.0.0.1:8545 — JSON-RPC at `${gatewayUrl}/v1/{network}`. */
  readonly gatewayUrl: string;
  /** e.g. http://127.0.0.1:8787/client/v4 */
  readonly apiUrl: string;
  readonly store: Store;
  /** The anvil devnet when `devnet.enabled` (the offline default), else undefined. */
  readonly devnet: Devnet | undefined;
  /** The gateway's chain tracker (SPEC §9): heads, reorgs and finality of the configured networks. */
  readonly chain: ChainTracker;
  close(): Promise<void>;
}

export async function startSwitchyard(options: SwitchyardOptions): Promise<Switchyard> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger({ level: config.log_level, format: logFormatFor(config.log_format) });
  // Undo stack: each started part pushes its stop; close() and start-up failures pop in reverse, after
  // closing the listeners together (one grace period for both, not one after the other).
  const listeners: Array<() => Promise<void>> = [];
  const stops: Array<() => Promise<void>> = [];
  const guarded = async (stop: () => Promise<void>): Promise<void> => {
    try {
      await stop();
    } catch (err) {
      logger.error('error while stopping', { err });
    }
  };
  const unwind = async (): Promise<void> => {
    await Promise.all(listeners.splice(0).map(guarded));
    for (const stop of stops.reverse().splice(0)) await guarded(stop);
  };

  try {
    const store = await openStore({ data_dir: config.data_dir, database_url: config.database_url });
    stops.push(() => store.close());

    let devnet: Devnet | undefined;
    if (config.devnet?.enabled) {
      const started = await startDevnet(config.devnet, logger.child({ part: 'devnet' }), () => clock.now());
      devnet = started;
      stops.push(() => started.stop());
    }

    // ── Pools for routing: the config's pools seeded or applied by `pools_from_file` (and the devnet
    //    pool) in config.account_id, the config's warnings logged; the gateway reads the store's snapshot.
    await poolsFromFile({ store, clock, logger: logger.child({ part: 'store' }), config, devnetPool: devnet?.pool });
    // The offline demo's alert: a policy emailing devnet.alert_email (data_dir/outbox/ without smtp_url).
    if (devnet && config.devnet) {
      await seedDevnetAlertPolicy({
        store,
        clock,
        logger: logger.child({ part: 'devnet' }),
        accountId: config.account_id,
        email: config.devnet.alert_email,
        pool: devnet.pool.name,
      });
    }
    // ── One outbound target policy for every address contacted on an account's behalf: origins (gateway
    //    and probes), monitor redirects, webhooks.
    const outbound = new OutboundPolicy({
      trustedAccounts: config.outbound.trusted_accounts,
      ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
    });
    const metrics = new MetricsRegistry();
    // This process's CPU, memory and event loop (each gateway worker adds its own); the build once.
    registerProcessMetrics(metrics);
    registerBuildInfo(metrics);
    const storeDirectory = await StorePoolDirectory.start({
      store,
      accountId: config.account_id,
      logger: logger.child({ part: 'pools' }),
      metrics,
    });
    stops.push(async () => storeDirectory.close());
    const directory: PoolDirectory = storeDirectory;

    // ── Gateway keys (SPEC §11): the routing account's keys, polled every 250 ms (a revoke anywhere is
    //    refused here within 1 s); their usage is flushed to the store every second and on stop (after
    //    the gateway listener closed, before the store does), which also seeds the daily quotas.
    const keyDirectory = await StoreKeyDirectory.start({
      store,
      accountId: config.account_id,
      logger: logger.child({ part: 'keys' }),
      metrics,
    });
    stops.push(async () => keyDirectory.close());
    const quota = new LocalQuotaCounter();
    // With workers (and no Redis), their quota reserves are answered here, from the same store totals.
    const workerQuotas = config.gateway.workers > 1 ? new LocalQuotaBackend(quota) : undefined;
    const usage = await UsageRecorder.start({
      store,
      clock,
      logger: logger.child({ part: 'keys' }),
      observeTotals: (date, totals) => quota.observe(date, totals),
    });
    stops.push(() => usage.stop());
    // ── Per-origin statistics for the console (SPEC §13): the gateway (and the workers' reports) count
    //    in memory; flushed to the store every 5 s with additive upserts, and on stop.
    const originStats = new OriginStats(clock);
    const statsRecorder = new StatsRecorder({
      store,
      clock,
      logger: logger.child({ part: 'stats' }),
      stats: originStats,
    });
    stops.push(() => statsRecorder.stop());
    // ── Instances compare times each took from its own clock: on PostgreSQL, this one's is checked
    //    against the store's at start and every minute (a warning beyond 1 s).
    const clockOffset = new ClockOffsetCheck({ store, clock, logger: logger.child({ part: 'store' }), metrics });
    await clockOffset.start();
    stops.push(() => clockOffset.stop());

    // ── Health: monitors probe the pools' origins; the gateway routes by their view, the API shows it.
    //    Events this process records nudge the notification service (started below), so alerts go out at
    //    once; its poll still picks up events recorded by other processes.
    let notifications: NotificationService | undefined;
    // What probes reveal of an origin's head reaches the gateway's chain tracker (started below).
    let chain: (ChainFeedback & Pick<ChainView, 'networkHead'>) | undefined;
    const monitor = new HealthMonitor({
      store,
      directory,
      routingAccountId: config.account_id,
      networks: config.networks,
      clock,
      logger: logger.child({ part: 'health' }),
      metrics,
      outbound,
      onEvents: () => notifications?.wake(),
      onBlockNumber: (poolId, originName, blockNumber) => chain?.sawHead(poolId, originName, blockNumber),
      // max_block_lag is judged against the head the tracker adopted, never one origin's claim (SPEC §20).
      adoptedHead: (network) => chain?.networkHead(network),
    });
    await monitor.start();
    stops.push(() => monitor.stop());
    const health: HealthView = monitor.view;

    // ── Notifications start after the API listener (below), so their emails name its real URL.

    // ── Global limits (SPEC §11): with redis_url, rate-limit buckets and key quotas are leased from
    //    Redis (this process's counts decide while it is down), and key changes are announced on its bus
    //    so every instance re-reads its key table at once (the 250 ms poll stays the fallback).
    let limiter: Limiter | undefined;
    let keyQuota: QuotaCounter = quota;
    let bus: ChangeBus | undefined;
    let shared: { leases: LeaseBackend; quotas: QuotaBackend; affinity: AffinityShare } | undefined;
    if (config.redis_url !== undefined) {
      // Loaded only when used: the Redis client is a large module graph every other start would load.
      const { sharedLimits } = await import('./limits/shared-limits.js');
      const limitsLogger = logger.child({ part: 'limits' });
      const limits = await sharedLimits(config.redis_url, { clock, logger: limitsLogger, metrics, seeds: quota });
      stops.push(() => limits.close());
      limiter = limits.limiter;
      keyQuota = limits.quota(quota);
      bus = limits.bus;
      shared = limits;
      const unsubscribe = bus.subscribe('keys', () => void keyDirectory.refresh());
      stops.push(async () => unsubscribe());
    }

    // Workers' quota reserves (cluster/control.ts): Redis's counts, else this process's (workers only).
    const quotaReserves = shared?.quotas ?? workerQuotas;

    // Response cache for immutable reads (gateway/upstream/cache/caching-forwarder.ts), wrapped around the origin
    // forwarder; its finality comes from the gateway's chain tracker.
    let caching: CachingForwarder | undefined;
    // With `gateway.workers` > 1, worker processes serve the gateway listener, fed from here
    // (cluster/control.ts: this process keeps the chain tracker; each worker builds its own cache).
    const start = config.gateway.workers > 1 ? startGatewayWorkers : startGateway;
    const gateway: Gateway & Partial<Pick<GatewayWorkers, 'renderMetrics'>> = await named(
      'gateway.listen',
      config.gateway.listen,
      options.sources?.['gateway.listen'],
      start({
        config,
        directory,
        health,
        storeReadiness: new StoreProbe(store),
        clock,
        logger: logger.child({ part: 'gateway' }),
        metrics,
        outbound,
        keys: { table: keyDirectory, quota: keyQuota, usage },
        stats: originStats,
        ...(options.buffers !== undefined && { buffers: options.buffers }),
        ...(limiter !== undefined && { limiter }),
        // Workers (cluster/control.ts) lease from Redis when there is one, else from this process.
        ...(quotaReserves !== undefined && { quotas: quotaReserves }),
        ...(shared !== undefined && { leases: shared.leases }),
        // Read-your-writes and filter affinity between instances (with workers: relayed by the control).
        ...(shared !== undefined && { affinityShare: shared.affinity }),
        ...(options.subscriptions !== undefined && { subscriptions: options.subscriptions }),
        ...(config.gateway.cache_max_bytes > 0 && {
          wrapForwarder: (inner: Forwarder, chain: GatewayChain) => {
            caching = new CachingForwarder(inner, {
              maxBytes: config.gateway.cache_max_bytes,
              chain,
              logger: logger.child({ part: 'cache' }),
              metrics,
            });
            return caching;
          },
        }),
      }),
    );
    listeners.push(() => gateway.close(config.shutdown_grace));
    stops.push(async () => caching?.close());
    chain = gateway.chain;

    // ── Management API listener.
    const api = createApiServer({
      config,
      store,
      clock,
      logger,
      metrics,
      // With workers: this process's metrics and every worker's, summed.
      ...(gateway.renderMetrics !== undefined && { renderMetrics: gateway.renderMetrics }),
      routes: coreRoutes({
        config,
        store,
        clock,
        logger: logger.child({ part: 'api' }),
        health: monitor,
        chain: gateway.chain,
        outbound,
        poolsChanged: () => storeDirectory.refresh(),
        keysChanged: async () => {
          await keyDirectory.refresh();
          bus?.publish('keys');
        },
      }),
    });
    const apiUrl = `${await named('api.listen', config.api.listen, options.sources?.['api.listen'], api.listen())}${API_BASE_PATH}`;
    listeners.push(() => api.close());

    // ── Notifications: health events → policies' webhooks and email, legacy per-pool email, deprecation
    //    notices. Started after the API listener so emails name its real URL; stopped before it
    //    (undelivered alerts stay queued in the store).
    notifications = new NotificationService({
      store,
      config,
      clock,
      logger: logger.child({ part: 'notifications' }),
      apiBase: apiUrl,
      metrics,
      outbound,
    });
    const started = notifications;
    await started.start();
    stops.push(() => started.stop());

    // ── Chain incidents (SPEC §14): the tracker's heads, reorgs and finality → incidents in the store,
    //    which the notification service turns into alerts (woken at once when this process records one).
    const incidents = new IncidentDetector({
      chain: gateway.chain,
      networks: config.networks,
      store,
      clock,
      logger: logger.child({ part: 'incidents' }),
      onRecorded: () => started.wake(),
      // The devnet mining a block per transaction sits still while idle: that is no stall.
      onDemandHeads: devnetOnDemandHeads(config),
    });
    await incidents.start();
    stops.push(() => incidents.stop());

    logger.info('switchyard started', { gateway: gateway.url, api: apiUrl });
    let closing: Promise<void> | undefined;
    return {
      gatewayUrl: gateway.url,
      apiUrl,
      store,
      devnet,
      chain: gateway.chain,
      close: () => {
        closing ??= unwind().then(() => logger.info('switchyard stopped'));
        return closing;
      },
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}

/**
 * A listener that cannot bind fails start-up with a message naming the address asked for, where it was
 * set (flag, environment variable, config key or the default) and how to choose another.
 */
async function named<T>(
  key: 'gateway.listen' | 'api.listen',
  address: string,
  source: SettingSource | undefined,
  starting: Promise<T>,
): Promise<T> {
  try {
    return await starting;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'EADDRINUSE'
        ? 'is already in use by another process; stop that process or'
        : code === 'EACCES'
          ? 'needs privileges to bind (ports below 1024);'
          : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
            ? 'is not an address of this machine;'
            : undefined;
    if (why === undefined) throw err;
    const from = source ?? { label: key, change: `set ${key} in a config file` };
    throw new Error(`${key}: ${address} (set by ${from.label}) ${why} ${from.change}`, { cause: err });
  }
}
