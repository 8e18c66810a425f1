/**
 * What must be global across `serve` instances, on the Redis of `redis_url` (SPEC §11): the gateway's
 * rate limits (leased, rpc/leased-limiter.ts), daily key quotas (rpc/quota-leased.ts) and change notices
 * (change-bus.ts), and affinity entries (redis-affinity.ts). One connection for leases, quotas and
 * publishing, one for subscriptions (both the bus's and the affinity share's). Start-up waits
 * at most REDIS_START_WAIT_MS (2 s): a Redis not there yet counts as an outage (logged once, limits
 * local) that ends when it answers. main.ts imports this module only when `redis_url` is set.
 */
import type { Clock } from '../clock.js';
import type { LeaseBackend } from '../gateway/rpc/lease-backend.js';
import { LeasedLimiter } from '../gateway/rpc/leased-limiter.js';
import type { QuotaCounter } from '../gateway/rpc/quota.js';
import type { QuotaBackend } from '../gateway/rpc/quota-backend.js';
import { LeasedQuotaCounter } from '../gateway/rpc/quota-leased.js';
import type { Limiter } from '../gateway/rpc/rate-limit.js';
import { SharedLimitsStatus } from '../gateway/rpc/shared-status.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { ChangeBus } from '../model/change-bus.js';
import { maskAddress } from '../model/origin-address.js';
import { RedisChangeBus } from './change-bus.js';
import { RedisAffinityShare } from './redis-affinity.js';
import { RedisLeaseBackend, RedisQuotaBackend } from './redis-backend.js';
import { connectRedis, subscriberOf, whenReady } from './redis-client.js';

/** How long start-up waits for Redis before going on with local limits (fail open). */
const REDIS_START_WAIT_MS = 2_000;

/** What must be global across instances, on the Redis of `redis_url` (SPEC §11). */
export interface SharedLimits {
  /** The gateway's rate limits, leased. */
  readonly limiter: Limiter;
  /** Daily key quotas counted on Redis; `fallback` (this process's count) decides while it is down. */
  quota(fallback: QuotaCounter): QuotaCounter;
  /** Change notices between instances (topic `keys`: re-read the key table now). */
  readonly bus: ChangeBus;
  /** Read-your-writes and filter affinity between instances (redis-affinity.ts). */
  readonly affinity: RedisAffinityShare;
  /** The Redis backends themselves, for a control process answering its workers' leases and reserves. */
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
  parts: { clock: Clock; logger: Logger; metrics: MetricsRegistry },
): Promise<SharedLimits> {
  const redis = connectRedis(url, { purpose: 'limits', logger: parts.logger });
  const status = new SharedLimitsStatus({ backend: 'redis', ...parts });
  if (await whenReady(redis, REDIS_START_WAIT_MS)) {
    parts.logger.info('rate limits are global (redis)', { redis_url: maskAddress(url) });
  } else {
    status.failed(new Error(`redis ${maskAddress(url)} did not answer within ${REDIS_START_WAIT_MS} ms`));
  }
  const subscriber = subscriberOf(redis);
  const bus = new RedisChangeBus(redis, subscriber, parts.logger);
  const affinity = new RedisAffinityShare(redis, subscriber, parts.logger);
  const leases = new RedisLeaseBackend(redis);
  const quotas = new RedisQuotaBackend(redis);
  return {
    limiter: new LeasedLimiter({ backend: leases, status, clock: parts.clock }),
    quota: (fallback) => new LeasedQuotaCounter({ backend: quotas, status, fallback }),
    bus,
    affinity,
    leases,
    quotas,
    // QUIT lets replies in flight arrive (a last lease is not taken for an outage); a dead link just drops.
    close: async () => {
      subscriber.disconnect();
      await redis.quit().then(
        () => undefined,
        () => redis.disconnect(),
      );
    },
  };
}
