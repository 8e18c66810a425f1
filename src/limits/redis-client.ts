/**
 * The Redis connection of `redis_url` (SPEC §11; ioredis). Set for the hot path's sake: commands are
 * never queued while the connection is down (`enableOfflineQueue: false`) and time out after
 * COMMAND_TIMEOUT_MS, so a lease fails fast and the gateway falls back to local limits instead of
 * waiting; the client reconnects in the background (back-off 100 ms per attempt, at most 2 s).
 * Connection errors are not logged here: the limiter logs each outage once. The URL may hold a
 * password; only its masked form is ever logged.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { maskAddress } from '../model/origin-address.js';

/** ms a Redis command may take before it counts as a failure (and limits fall back to local). */
export const COMMAND_TIMEOUT_MS = 500;

export interface RedisOptions {
  /** Why this connection exists, for the log (e.g. "limits", "changes"). */
  purpose: string;
  logger: Logger;
}

export function connectRedis(url: string, options: RedisOptions): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    connectionName: `switchyard-${options.purpose}`,
  });
  // Errors also reject the commands that met them; the event would otherwise be printed by ioredis.
  redis.on('error', () => {});
  options.logger.debug('redis connecting', { redis_url: maskAddress(url), purpose: options.purpose });
  return redis;
}

/** Resolves when `redis` is ready, or after `timeoutMs` (true = ready); start-up never waits longer. */
export async function whenReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise((resolve) => {
    const done = (ready: boolean): void => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ready);
    };
    const onReady = (): void => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    redis.on('ready', onReady);
  });
}

/**
 * The connection a process subscribes on (Redis serves no other command on it): a duplicate of `redis`
 * that, unlike it, queues commands while Redis is down (no timeout, no retry limit) and renews its
 * subscriptions after every reconnect — a subscription is on no request's path. One per process: the
 * change bus and the affinity share both subscribe on it, each reading only its own channels.
 */
export function subscriberOf(redis: Redis): Redis {
  const subscriber = redis.duplicate({
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
    commandTimeout: undefined,
    autoResubscribe: true,
    connectionName: 'switchyard-subscriptions',
  });
  subscriber.on('error', () => {});
  return subscriber;
}
