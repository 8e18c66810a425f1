/**
 * Throttled origins (SPEC §17), as routing sees them: an origin is skipped — never waited on — while it
 * is benched or at its cap.
 *   - Benched: an origin that answered HTTP 429 or a provider's rate-limit answer is benched for its
 *     `Retry-After` (or the answer's own back-off, e.g. Infura's `data.backoff_seconds`), DEFAULT_BENCH_MS
 *     (1 s) when it gives none, at most MAX_BENCH_MS (10 min: a bogus header cannot take an origin out
 *     for days; the next 429 benches it again). Benching never touches health: the HealthView, demotion
 *     and the monitor's state do not see it.
 *   - Capped: `origins[].max_requests_per_second` is a token bucket per (pool, origin) holding one
 *     second's worth (at least one request), refilled continuously; each attempt of client traffic on the
 *     origin takes a token (`take`, when the attempt starts), head polls and probes take none. With
 *     `gateway.workers` = N each worker holds 1/N of the rate (`share`), so together they stay under it.
 * Keys are pool id + origin name. Reads the injected Clock's monotonic time. `available` is the
 * router's check (nothing is built when no origin is benched or capped); `retryAfter` tells a client
 * whose every origin was skipped when to come back.
 */
import type { Clock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import type { Origin, Pool } from '../model/pool.js';

export const DEFAULT_BENCH_MS = 1_000;
export const MAX_BENCH_MS = 600_000;

interface CapBucket {
  rate: number;
  tokens: number;
  at: number;
}

export class OriginThrottle {
  readonly #clock: Clock;
  readonly #share: number;
  /** `${poolId}\n${origin}` → benched until (monotonic ms) */
  readonly #benched = new Map<string, number>();
  readonly #buckets = new Map<string, CapBucket>();

  /** `share`: this process's part of each origin's cap (1 / gateway workers). */
  constructor(clock: Clock, share = 1) {
    this.#clock = clock;
    this.#share = share;
  }

  /** Benches the origin for `ms` (default 1 s, at most 10 min); a longer bench already running stays. */
  bench(poolId: string, originName: string, ms: number | undefined): void {
    const span = Math.min(MAX_BENCH_MS, Math.max(0, ms ?? DEFAULT_BENCH_MS));
    const until = this.#clock.monotonic() + span;
    const k = key(poolId, originName);
    if ((this.#benched.get(k) ?? 0) < until) this.#benched.set(k, until);
  }

  /** Whether an attempt may go to this origin now: not benched, and a token left under its cap. */
  available(poolId: string, origin: Origin): boolean {
    if (this.#benched.size === 0 && origin.max_requests_per_second === undefined) return true;
    return this.wait(poolId, origin) === 0;
  }

  /** Takes a token for an attempt starting now; false when the origin is benched or at its cap. */
  take(poolId: string, origin: Origin): boolean {
    if (!this.available(poolId, origin)) return false;
    const bucket = this.#bucket(poolId, origin);
    if (bucket !== undefined) bucket.tokens -= 1;
    return true;
  }

  /** Milliseconds until the origin may take an attempt (0: now). */
  wait(poolId: string, origin: Origin): number {
    const now = this.#clock.monotonic();
    const k = key(poolId, origin.name);
    let wait = 0;
    const until = this.#benched.get(k);
    if (until !== undefined) {
      if (until > now) wait = until - now;
      else this.#benched.delete(k);
    }
    const bucket = this.#bucket(poolId, origin);
    if (bucket !== undefined && bucket.tokens < 1) wait = Math.max(wait, ((1 - bucket.tokens) / bucket.rate) * 1000);
    return wait;
  }

  /** The origin's bucket, refilled to now; undefined when it has no cap. */
  #bucket(poolId: string, origin: Origin): CapBucket | undefined {
    const cap = origin.max_requests_per_second;
    const k = key(poolId, origin.name);
    if (cap === undefined) {
      this.#buckets.delete(k);
      return undefined;
    }
    const rate = cap * this.#share;
    const size = Math.max(1, rate);
    const now = this.#clock.monotonic();
    let bucket = this.#buckets.get(k);
    if (bucket === undefined || bucket.rate !== rate) {
      bucket = { rate, tokens: size, at: now };
      this.#buckets.set(k, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(size, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    bucket.at = now;
    return bucket;
  }
}

function key(poolId: string, originName: string): string {
  return `${poolId}\n${originName}`;
}

/**
 * UPSTREAM_THROTTLED (429): every origin that could take a read is throttled. `Retry-After` is the
 * soonest any of them is free again (`wait`, ms), in whole seconds, at least 1. Names only in details.
 */
export function throttledError<T extends { readonly pool: Pool; readonly origin: Origin }>(
  network: string,
  throttled: readonly T[],
  wait: (candidate: T) => number,
): SwitchyardError {
  let soonest = Number.POSITIVE_INFINITY;
  for (const candidate of throttled) soonest = Math.min(soonest, wait(candidate));
  const retryAfter = Math.max(1, Math.ceil((Number.isFinite(soonest) ? soonest : DEFAULT_BENCH_MS) / 1000));
  return new SwitchyardError(
    'UPSTREAM_THROTTLED',
    `Every origin of ${network} that could take this call is throttling it (rate limited by its provider, or at ` +
      `its max_requests_per_second); retry after ${retryAfter} s.`,
    {
      headers: { 'retry-after': String(retryAfter) },
      details: {
        network,
        retry_after: retryAfter,
        origins: throttled.map(({ pool, origin }) => ({ pool: pool.name, origin: origin.name })),
      },
    },
  );
}
