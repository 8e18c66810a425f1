/**
 * Change notices between processes and instances (the `ChangeBus` port, model/shared-limits.ts): after
 * a gateway key changes (revoke, disable, roll), the writer publishes topic `keys`, and every subscriber
 * re-reads the store at once instead of at its next poll (which stays the fallback: a notice is best
 * effort and carries no data).
 * - RedisChangeBus (`redis_url`): PUBLISH on channel `switchyard:changes:<topic>` over the shared
 *   connection (a failed publish is dropped: the poll catches up); SUBSCRIBE on the process's subscriber
 *   connection (redis-client.ts `subscriberOf`: Redis requires a second one), which queues its
 *   subscriptions until connected and renews them after every reconnect. A subscriber hears its own
 *   notices too.
 * - LocalChangeBus: the same within one process (tests, and a control process without Redis).
 * Listeners run asynchronously, one after another; one that throws is logged and the others still run.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import type { ChangeBus } from '../model/change-bus.js';

const CHANNEL_PREFIX = 'switchyard:changes:';

class Listeners {
  readonly #byTopic = new Map<string, Set<() => void>>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Adds `listener`; true when it is the topic's first. */
  add(topic: string, listener: () => void): boolean {
    let set = this.#byTopic.get(topic);
    const first = set === undefined;
    if (set === undefined) {
      set = new Set();
      this.#byTopic.set(topic, set);
    }
    set.add(listener);
    return first;
  }

  /** Removes `listener`; true when the topic has none left. */
  remove(topic: string, listener: () => void): boolean {
    const set = this.#byTopic.get(topic);
    if (set === undefined || !set.delete(listener)) return false;
    if (set.size > 0) return false;
    this.#byTopic.delete(topic);
    return true;
  }

  notify(topic: string): void {
    for (const listener of [...(this.#byTopic.get(topic) ?? [])]) {
      try {
        listener();
      } catch (err) {
        this.#logger.error('change listener failed', { topic, err });
      }
    }
  }
}

export class RedisChangeBus implements ChangeBus {
  readonly #publisher: Redis;
  readonly #subscriber: Redis;
  readonly #listeners: Listeners;

  /** `redis` publishes; `subscriber` (redis-client.ts `subscriberOf`, owned by the caller) subscribes. */
  constructor(redis: Redis, subscriber: Redis, logger: Logger) {
    this.#publisher = redis;
    this.#listeners = new Listeners(logger);
    this.#subscriber = subscriber;
    this.#subscriber.on('message', (channel: string) => {
      if (channel.startsWith(CHANNEL_PREFIX)) this.#listeners.notify(channel.slice(CHANNEL_PREFIX.length));
    });
  }

  publish(topic: string): void {
    this.#publisher.publish(`${CHANNEL_PREFIX}${topic}`, '').catch(() => {});
  }

  subscribe(topic: string, listener: () => void): () => void {
    if (this.#listeners.add(topic, listener)) {
      this.#subscriber.subscribe(`${CHANNEL_PREFIX}${topic}`).catch(() => {});
    }
    return () => {
      if (this.#listeners.remove(topic, listener)) {
        this.#subscriber.unsubscribe(`${CHANNEL_PREFIX}${topic}`).catch(() => {});
      }
    };
  }

  /** Resolves once every subscription made so far is in place on Redis (tests, start-up). */
  async ready(): Promise<void> {
    await this.#subscriber.ping();
  }
}

export class LocalChangeBus implements ChangeBus {
  readonly #listeners: Listeners;

  constructor(logger: Logger) {
    this.#listeners = new Listeners(logger);
  }

  publish(topic: string): void {
    setImmediate(() => this.#listeners.notify(topic));
  }

  subscribe(topic: string, listener: () => void): () => void {
    this.#listeners.add(topic, listener);
    return () => {
      this.#listeners.remove(topic, listener);
    };
  }
}
