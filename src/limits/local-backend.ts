/**
 * The global buckets and daily quotas held in this process: the `LeaseBackend` and `QuotaBackend` the
 * control process serves its workers from when there is no Redis (the workers' IPC reaches it), and
 * the reference the Redis backend (redis-backend.ts) must agree with. Same rules: a bucket starts
 * full (`burst`), refills at `rate` per second, never grants more than it holds; a key's day never
 * grants beyond its quota. Bounded memory: at most 100 000 buckets (least recently asked dropped — a
 * dropped bucket comes back full, as one long idle would be) and only today's and yesterday's quota
 * counters (older days are dropped when a new day is first asked); a key's count starts from (and is
 * raised to) what its `QuotaSeeds` know — the store's usage — so a restarted control process does not
 * grant a quota twice. Reads the injected Clock.
 */
import type { Clock } from '../clock.js';
import type { LeaseAsk, LeaseBackend } from '../gateway/rpc/lease-backend.js';
import { DayCounts } from '../gateway/rpc/quota.js';
import type { QuotaAsk, QuotaBackend, QuotaGrant, QuotaSeeds } from '../gateway/rpc/quota-backend.js';
import { type BucketState, grantFrom } from './bucket.js';

const MAX_BUCKETS = 100_000;

export class LocalLeaseBackend implements LeaseBackend {
  readonly #clock: Clock;
  readonly #buckets = new Map<string, BucketState>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Synchronous under the promise: an in-process backend never fails. */
  async lease(asks: readonly LeaseAsk[]): Promise<number[]> {
    return this.leaseNow(asks);
  }

  leaseNow(asks: readonly LeaseAsk[]): number[] {
    const now = this.#clock.now();
    return asks.map((ask) => {
      const { granted, state } = grantFrom(this.#buckets.get(ask.bucket), ask.spec, ask.want, now);
      this.#buckets.delete(ask.bucket);
      this.#buckets.set(ask.bucket, state);
      if (this.#buckets.size > MAX_BUCKETS) {
        const oldest = this.#buckets.keys().next().value;
        if (oldest !== undefined) this.#buckets.delete(oldest);
      }
      return granted;
    });
  }
}

export class LocalQuotaBackend implements QuotaBackend {
  readonly #counts = new DayCounts();
  readonly #seeds: QuotaSeeds | undefined;

  /** `seeds`: what the store and this process know each key spent (its count is raised to them, never lowered). */
  constructor(seeds?: QuotaSeeds) {
    this.#seeds = seeds;
  }

  async reserve(asks: readonly QuotaAsk[]): Promise<QuotaGrant[]> {
    return this.reserveNow(asks);
  }

  reserveNow(asks: readonly QuotaAsk[]): QuotaGrant[] {
    return asks.map((ask) => {
      if (this.#seeds !== undefined) this.#counts.raise(ask.date, ask.key, this.#seeds.spent(ask.date, ask.key));
      const used = this.#counts.spent(ask.date, ask.key);
      const granted = Math.max(0, Math.min(Math.floor(ask.want), ask.quota - used));
      if (granted > 0) this.#counts.add(ask.date, ask.key, granted);
      return { granted, left: Math.max(0, ask.quota - used - granted) };
    });
  }
}
