/**
 * Token buckets of this process: the `Limiter` port for `gateway.rate_limit: {requests_per_second,
 * burst}` (burst defaults to max(1, ceil(requests_per_second)), `rateSpec`). A bucket is named by the
 * caller (its API key when keys are configured, else its remote address); each `take` brings the spec
 * of that bucket, so buckets of different specs (e.g. per gateway key) live side by side. Each JSON-RPC
 * call costs one token (a batch of 10 costs 10). A request that does not fit is refused whole with 429
 * and `Retry-After` (whole seconds until it would fit). At most 100 000 buckets are tracked (the least
 * recently used are dropped), so memory stays bounded. Reads the injected Clock.
 */
import type { Clock } from '../../clock.js';
import { SwitchyardError } from '../../errors/base.js';

const MAX_CLIENTS = 100_000;

/** A bucket's limit: refill rate and capacity, both in calls. */
export interface RateSpec {
  readonly requests_per_second: number;
  readonly burst: number;
}

/** The gateway's rate limiting port: this process's buckets, or budgets leased from a shared store. */
export interface Limiter {
  /** Takes `cost` tokens from `bucket`, whose limit is `spec`, or throws RATE_LIMITED (429, Retry-After). */
  take(bucket: string, spec: RateSpec, cost: number): void;
}

/** A configured `rate_limit` with its burst default applied. */
export function rateSpec(options: { requests_per_second: number; burst?: number | undefined }): RateSpec {
  return {
    requests_per_second: options.requests_per_second,
    burst: options.burst ?? Math.max(1, Math.ceil(options.requests_per_second)),
  };
}

/** The RATE_LIMITED refusal of `cost` calls against `spec` when `tokens` are left. */
export function rateLimited(spec: RateSpec, cost: number, tokens: number): SwitchyardError {
  const { requests_per_second: rate, burst } = spec;
  const retryAfter = cost > burst ? Math.ceil(burst / rate) : Math.max(1, Math.ceil((cost - tokens) / rate));
  return new SwitchyardError(
    'RATE_LIMITED',
    cost > burst
      ? `This request has ${cost} calls but the rate limit allows at most ${burst} at once; split it.`
      : `Rate limit exceeded (${rate} requests per second); retry after ${retryAfter} s.`,
    { headers: { 'retry-after': String(retryAfter) }, details: { retry_after: retryAfter } },
  );
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter implements Limiter {
  readonly #clock: Clock;
  readonly #buckets = new Map<string, Bucket>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  take(client: string, spec: RateSpec, cost: number): void {
    const { requests_per_second: rate, burst } = spec;
    const now = this.#clock.now();
    const bucket = this.#buckets.get(client) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    bucket.at = now;
    if (cost > burst || bucket.tokens < cost) {
      this.#remember(client, bucket);
      throw rateLimited(spec, cost, bucket.tokens);
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
