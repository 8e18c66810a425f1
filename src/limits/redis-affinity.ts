/**
 * Read-your-writes and filter affinity across `serve` instances (the gateway's AffinityShare port,
 * gateway/upstream/affinity-share.ts) on the Redis of `redis_url`: each entry an instance records is
 * PUBLISHed as JSON on channel `switchyard:affinity` over the shared connection (a failed publish is
 * dropped: the entry then holds on this instance only), and the process's subscriber connection
 * (redis-client.ts `subscriberOf`) SUBSCRIBEs, so every instance, this one included, adopts it. A message that is not
 * a well-formed entry is ignored. `until` is the recording instance's wall clock: instances are assumed
 * to keep their clocks in step (NTP), as the entries last seconds to minutes.
 *
 * State: the listeners.
 */
import type { Redis } from 'ioredis';
import type { AffinityEntry, AffinityShare } from '../gateway/upstream/affinity-share.js';
import type { Logger } from '../log.js';

export const AFFINITY_CHANNEL = 'switchyard:affinity';

export class RedisAffinityShare implements AffinityShare {
  readonly #publisher: Redis;
  readonly #subscriber: Redis;
  readonly #listeners: Array<(entry: AffinityEntry) => void> = [];
  readonly #logger: Logger;
  #subscribed = false;

  /** `redis` publishes; `subscriber` (redis-client.ts `subscriberOf`, owned by the caller) subscribes. */
  constructor(redis: Redis, subscriber: Redis, logger: Logger) {
    this.#publisher = redis;
    this.#logger = logger;
    this.#subscriber = subscriber;
    this.#subscriber.on('message', (channel: string, message: string) => {
      if (channel !== AFFINITY_CHANNEL) return;
      const entry = affinityEntry(message);
      if (entry === undefined) return;
      for (const listener of this.#listeners) {
        try {
          listener(entry);
        } catch (err) {
          this.#logger.error('affinity listener failed', { err });
        }
      }
    });
  }

  publish(entry: AffinityEntry): void {
    this.#publisher.publish(AFFINITY_CHANNEL, JSON.stringify(entry)).catch(() => {});
  }

  subscribe(listener: (entry: AffinityEntry) => void): void {
    this.#listeners.push(listener);
    if (this.#subscribed) return;
    this.#subscribed = true;
    this.#subscriber.subscribe(AFFINITY_CHANNEL).catch(() => {});
  }

  /** Resolves once the subscription is in place on Redis (tests, start-up). */
  async ready(): Promise<void> {
    await this.#subscriber.ping();
  }
}

/** The text members of each kind of entry (besides `kind` and the number `until`). */
const TEXT_MEMBERS: Record<AffinityEntry['kind'], readonly string[]> = {
  write: ['network', 'client', 'poolId', 'origin'],
  filter: ['network', 'id', 'pool', 'origin'],
};

/** The entry a message carries (its known members only), or undefined when it is not one. */
export function affinityEntry(message: string): AffinityEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const members = v.kind === 'write' || v.kind === 'filter' ? TEXT_MEMBERS[v.kind] : undefined;
  if (members === undefined || typeof v.until !== 'number' || !Number.isFinite(v.until)) return undefined;
  if (!members.every((member) => typeof v[member] === 'string')) return undefined;
  return Object.fromEntries([
    ['kind', v.kind],
    ...members.map((member) => [member, v[member]]),
    ['until', v.until],
  ]) as AffinityEntry;
}
