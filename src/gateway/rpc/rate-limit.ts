/**
 * Per-client token buckets for `gateway.rate_limit: {requests_per_second, burst}` (burst defaults to
 * max(1, ceil(requests_per_second))). A client is its API key when keys are configured, else its remote
 * address. Each JSON-RPC call costs one token (a batch of 10 costs 10). A request that does not fit is
 * refused whole with 429 and `Retry-After` (whole seconds until it would fit). Buckets that are full
 * again are forgotten, and at most 100 000 clients are tracked (the oldest are dropped), so memory stays
 * bounded. Reads the injected Clock.
 */
import type { Clock } from '../../clock.js';
import { SwitchyardError } from '../../errors/base.js';

const MAX_CLIENTS = 100_000;

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  readonly #rate: number;
  readonly #burst: number;
  readonly #clock: Clock;
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: { requests_per_second: number; burst?: number | undefined }, clock: Clock) {
    this.#rate = options.requests_per_second;
    this.#burst = options.burst ?? Math.max(1, Math.ceil(options.requests_per_second));
    this.#clock = clock;
  }

  /** Takes `cost` tokens from the client's bucket or throws RATE_LIMITED. */
  take(client: string, cost: number): void {
    const now = this.#clock.now();
    const bucket = this.#buckets.get(client) ?? { tokens: this.#burst, at: now };
    bucket.tokens = Math.min(this.#burst, bucket.tokens + ((now - bucket.at) / 1000) * this.#rate);
    bucket.at = now;
    if (cost > this.#burst || bucket.tokens < cost) {
      this.#remember(client, bucket);
      const retryAfter =
        cost > this.#burst
          ? Math.ceil(this.#burst / this.#rate)
          : Math.max(1, Math.ceil((cost - bucket.tokens) / this.#rate));
      throw new SwitchyardError(
        'RATE_LIMITED',
        cost > this.#burst
          ? `This request has ${cost} calls but the rate limit allows at most ${this.#burst} at once; split it.`
          : `Rate limit exceeded (${this.#rate} requests per second); retry after ${retryAfter} s.`,
        { headers: { 'retry-after': String(retryAfter) }, details: { retry_after: retryAfter } },
      );
    }
    bucket.tokens -= cost;
    this.#remember(client, bucket);
  }

  #remember(client: string, bucket: Bucket): void {
    this.#buckets.delete(client);
    this.#buckets.set(client, bucket);
    if (this.#buckets.size > MAX_CLIENTS) {
      for (const [key, old] of this.#buckets) {
        if (this.#buckets.size <= MAX_CLIENTS * 0.9) break;
        if (old !== bucket) this.#buckets.delete(key);
      }
    }
  }
}
