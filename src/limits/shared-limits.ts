/**
 * What must be global across `serve` instances, on the Redis of `redis_url` (SPEC §11): the gateway's
 * rate limits (leased, rpc/leased-limiter.ts), daily key quotas (rpc/quota-leased.ts) and change notices
 * (change-bus.ts), and affinity entries (redis-affinity.ts). One connection for leases, quotas and
 * publishing, one for subscriptions (both the bus's and the affinity share's). Start-up waits
 * at most REDIS_START_WAIT_MS (2 s): a Redis not there yet counts as an outage (logged once, limits
 * local) that ends when it answers. An outage starts with the first failed call or the connection
 * closing and ends when the connection is ready again or a call answers; meanwhile
 * `switchyard_limits_backend_up{backend="redis"}` is 0 and limits fail open (local counts, never a
 * refusal because Redis is down). Quota counts Redis lacks start from `seeds` (the store's usage).
 * main.ts imports this module only when `redis_url` is set.
 */

import type { Redis } from 'ioredis';
import type { Clock } from '../clock.js';
import type { LeaseBackend } from '../gateway/rpc/lease-backend.js';
import { LeasedLimiter } from '../gateway/rpc/leased-limiter.js';
import type { LocalQuotaCounter, QuotaCounter } from '../gateway/rpc/quota.js';
import type { QuotaBackend } from '../gateway/rpc/quota-backend.js';
import { LeasedQuotaCounter, type QuotaFallback } from '../gateway/rpc/quota-leased.js';
import type { Limiter } from '../gateway/rpc/rate-limit.js';
import { SharedLimitsStatus } from '../gateway/rpc/shared-status.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { ChangeBus } from '../model/change-bus.js';
import { maskAddress } from '../model/origin-address.js';
import { RedisChangeBus } from './change-bus.js';
import { failoverLeases, failoverQuotas } from './failover-backend.js';
import { LocalLeaseBackend, LocalQuotaBackend } from './local-backend.js';
import { RedisAffinityShare } from './redis-affinity.js';
import { RedisLeaseBackend, RedisQuotaBackend } from './redis-backend.js';
import { connectRedis, subscriberOf, whenReady } from './redis-client.js';

/** How long start-up waits for Redis before going on with local limits (fail open). */
const REDIS_START_WAIT_MS = 2_000;

/** What this instance knows each key spent (the store's usage, its own calls and reserves): quota seeds. */
type InstanceCounts = Pick<LocalQuotaCounter, 'spent' | 'raise'>;

/** What must be global across instances, on the Redis of `redis_url` (SPEC §11). */
export interface SharedLimits {
  /** The gateway's rate limits, leased. */
  readonly limiter: Limiter;
  /** Daily key quotas counted on Redis; `fallback` (this process's count) decides while it is down. */
  quota(fallback: QuotaFallback): QuotaCounter;
  /** Change notices between instances (topic `keys`: re-read the key table now). */
  readonly bus: ChangeBus;
  /** Read-your-writes and filter affinity between instances (redis-affinity.ts). */
  readonly affinity: RedisAffinityShare;
  /**
   * For a control process answering its workers' leases and reserves: Redis's, and while it does not
   * answer this instance's own (failover-backend.ts), so the workers still share one limit.
   */
  readonly leases: LeaseBackend;
  readonly quotas: QuotaBackend;
  close(): Promise<void>;
}

/**
 * The global limits on the Redis of `redis_url`: one connection for leases and quotas (and publishing
 * notices), one for subscriptions. Start-up waits at most REDIS_START_WAIT_MS: a Redis not there yet
 * counts as an outage (logged once, limits local) that ends when it answers.
 */
export async function sharedLimits(
  url: string,
  parts: { clock: Clock; logger: Logger; metrics: MetricsRegistry; seeds: InstanceCounts },
): Promise<SharedLimits> {
  const redis = connectRedis(url, { purpose: 'limits', logger: parts.logger });
  const status = new SharedLimitsStatus({ backend: 'redis', ...parts });
  if (await whenReady(redis, REDIS_START_WAIT_MS)) {
    parts.logger.info('rate limits are global (redis)', { redis_url: maskAddress(url) });
  } else {
    status.failed(new Error(`redis ${maskAddress(url)} did not answer within ${REDIS_START_WAIT_MS} ms`));
  }
  const stopWatching = watchConnection(redis, status);
  const subscriber = subscriberOf(redis);
  const bus = new RedisChangeBus(redis, subscriber, parts.logger);
  const affinity = new RedisAffinityShare(redis, subscriber, parts.logger);
  const leases = new RedisLeaseBackend(redis);
  const quotas = new RedisQuotaBackend(redis, parts.seeds);
  return {
    limiter: new LeasedLimiter({ backend: leases, status, clock: parts.clock }),
    quota: (fallback) => new LeasedQuotaCounter({ backend: quotas, status, fallback }),
    bus,
    affinity,
    leases: failoverLeases(leases, new LocalLeaseBackend(parts.clock), status),
    quotas: failoverQuotas(quotas, new LocalQuotaBackend(parts.seeds), status, parts.seeds),
    // QUIT lets replies in flight arrive (a last lease is not taken for an outage); a dead link just drops.
    close: async () => {
      stopWatching();
      subscriber.disconnect();
      await redis.quit().then(
        () => undefined,
        () => redis.disconnect(),
      );
    },
  };
}

/**
 * Keeps `status` true to the connection even when no call asks: a lost connection is an outage at once
 * (`backend_up` 0, the warning), the connection ready again ends it. Returns the stop (before QUIT).
 */
function watchConnection(redis: Redis, status: SharedLimitsStatus): () => void {
  const lost = (): void => status.failed(new Error('connection to redis lost'));
  const ready = (): void => status.succeeded();
  redis.on('close', lost);
  redis.on('ready', ready);
  return () => {
    redis.off('close', lost);
    redis.off('ready', ready);
  };
}
