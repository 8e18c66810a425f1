/**
 * Rate limits shared by every worker and instance (SPEC §11): the `Limiter` port answered from token
 * budgets leased from a global bucket (`LeaseBackend`: Redis, or the control process), so `take` stays
 * synchronous and the hot path never waits for a network round trip.
 *
 * Per bucket this process holds `tokens` it was granted. A call spends them or is refused at once (429,
 * Retry-After, as the local RateLimiter). The lease size starts at L = LEASE_MS (50 ms) of the bucket's
 * rate, at least 1 token and at most `burst`. When the held tokens fall below half a lease (or below a
 * refused call's cost) one ask goes out for the bucket (one in flight per bucket; the asks of one
 * event-loop turn go as one batch) for a lease minus what is held, rounded up to whole tokens. The
 * backend grants min(want, the whole tokens its bucket holds); the fraction stays in the global bucket,
 * so no refill is lost to rounding. A full grant after calls were refused for want of tokens doubles the lease, up to
 * S = max(L, burst/4), so a burst is not held back by round trips; a short grant means the global bucket
 * is empty: the lease goes back to L and the next ask waits until the bucket could have refilled the
 * rest (at most 1 s). A bucket this process has not seen starts with a provisional allowance
 * P = max(L, the first call's cost), owed to the backend: the next grants repay it before adding tokens.
 *
 * Bounds, for one bucket of rate r and burst B over a window of t seconds, n processes serving it, c the
 * largest call cost (1 for single calls):
 * - over-admission: admitted ≤ B + r·t (all the backend can grant in the window) + what the processes
 *   held at the window's start (≤ n·⌈max(S, c)⌉) + provisional allowances not repaid at its end (≤ n·P; a
 *   process forgets a debt only if the bucket falls out of its 100 000 most recent).
 * - under-admission, for a client that keeps every process asking at or above r: admitted ≥ B + r·t −
 *   what the processes hold at the window's end — ≤ n·⌈max(L, c)⌉, since the bucket is empty by then and
 *   leases are back to L — minus calls refused while a process's first asks are in flight at the
 *   window's start (a burst arriving faster than the round trips; leases double, so this lasts
 *   O(log(S/L)) round trips).
 * With r = 50, B = 50, n = 2 (L = 2.5, S = 12.5): 550, +≈ 30 at most in theory (held leases and
 * provisional allowances), −≈ 6 at the end plus the start-up round trips. Measured: within ±1 % with
 * two limiters on one Redis (test/limits/leased-redis.test.ts), −1 to −4 % through two whole gateways in
 * one busy test process, where round trips take 10–70 ms (test/gateway/global-rate-limit.test.ts).
 *
 * Fail open: when a lease fails (the backend rejects — unreachable — or no answer in 1 s) the process
 * limits alone with `fallback` (RateLimiter semantics: each process admits up to the full limit) — no
 * call is ever refused because the backend is down; shared-status.ts logs the outage once, shows it as a
 * metric and lets one ask through per second to notice the backend's return.
 */
import type { Clock } from '../../clock.js';
import type { LeaseAsk, LeaseBackend } from './lease-backend.js';
import { type Limiter, RateLimiter, type RateSpec, rateLimited } from './rate-limit.js';
import type { SharedLimitsStatus } from './shared-status.js';
import { TurnBatch } from './turn-batch.js';

/** The lease size in ms of a bucket's rate. */
export const LEASE_MS = 50;
/** The longest wait before asking again a bucket that came back short. */
const MAX_RETRY_MS = 1_000;
const MAX_BUCKETS = 100_000;

interface Held {
  /** Granted and not spent (≥ 0; fractional only through a provisional allowance). */
  tokens: number;
  /** The current lease size: from leaseSize() up to maxLeaseSize(), doubled while demand outruns it. */
  size: number;
  /** A call was refused since the last grant while the global bucket still granted in full. */
  starved: boolean;
  /** Provisional tokens spent before the backend granted any; repaid from the next grants. */
  owed: number;
  /** The largest cost refused since the last grant (the next ask covers it). */
  need: number;
  asking: boolean;
  /** No ask before this time (ms): the global bucket came back short. */
  retryAt: number;
}

interface PendingLease {
  held: Held;
  spec: RateSpec;
  ask: LeaseAsk;
}

/** Tokens one lease brings at first: LEASE_MS of the rate, at least 1, at most the burst. */
export function leaseSize(spec: RateSpec): number {
  return Math.min(spec.burst, Math.max(1, (spec.requests_per_second * LEASE_MS) / 1000));
}

/** The largest a lease grows while calls outrun the round trips: a quarter of the burst (≥ leaseSize). */
export function maxLeaseSize(spec: RateSpec): number {
  return Math.max(leaseSize(spec), spec.burst / 4);
}

export interface LeasedLimiterOptions {
  backend: LeaseBackend;
  status: SharedLimitsStatus;
  clock: Clock;
  /** Decides while the backend is unreachable (default: this process's own buckets). */
  fallback?: Limiter;
}

export class LeasedLimiter implements Limiter {
  readonly #backend: LeaseBackend;
  readonly #status: SharedLimitsStatus;
  readonly #clock: Clock;
  readonly #fallback: Limiter;
  readonly #held = new Map<string, Held>();
  readonly #batch: TurnBatch<LeaseAsk, PendingLease, number>;

  constructor(options: LeasedLimiterOptions) {
    this.#backend = options.backend;
    this.#status = options.status;
    this.#batch = new TurnBatch(
      (asks) => this.#status.settle(this.#backend.lease(asks)),
      (pending, granted) => {
        if (granted === undefined) pending.held.asking = false;
        else receive(pending, granted, this.#clock.now());
      },
    );
    this.#clock = options.clock;
    this.#fallback = options.fallback ?? new RateLimiter(options.clock);
  }

  take(bucket: string, spec: RateSpec, cost: number): void {
    if (cost > spec.burst) throw rateLimited(spec, cost, 0);
    const held = this.#remember(bucket, this.#held.get(bucket) ?? provisional(leaseSize(spec), cost));
    if (this.#status.down) {
      this.#status.fellBack();
      if (!held.asking && this.#status.probeDue()) this.#ask(bucket, held, spec);
      this.#fallback.take(bucket, spec, cost);
      return;
    }
    const admitted = held.tokens >= cost;
    if (admitted) held.tokens -= cost;
    else {
      held.need = Math.max(held.need, cost);
      held.starved = true;
    }
    if (
      !held.asking &&
      (held.owed > 0 || held.tokens < held.size / 2 || held.tokens < held.need) &&
      this.#clock.now() >= held.retryAt
    ) {
      this.#ask(bucket, held, spec);
    }
    if (!admitted) throw rateLimited(spec, cost, held.tokens);
  }

  #ask(bucket: string, held: Held, spec: RateSpec): void {
    held.asking = true;
    // Whole tokens: backends grant whole tokens (a fraction stays in the global bucket, not lost).
    const want = Math.max(1, Math.ceil(Math.max(0, Math.max(held.size, held.need) - held.tokens) + held.owed));
    // The asks of this event-loop turn go as one batch (one round trip).
    const ask = { bucket, spec, want };
    this.#batch.add(ask, { held, spec, ask });
  }

  /** Marks `held` most recently used, dropping the least recently used beyond MAX_BUCKETS. */
  #remember(bucket: string, held: Held): Held {
    this.#held.delete(bucket);
    this.#held.set(bucket, held);
    if (this.#held.size > MAX_BUCKETS) {
      const oldest = this.#held.keys().next().value;
      if (oldest !== undefined) this.#held.delete(oldest);
    }
    return held;
  }
}

/** A bucket new to this process: the provisional allowance max(L, the first call's cost), owed. */
function provisional(size: number, cost: number): Held {
  const tokens = Math.max(size, cost);
  return { tokens, size, starved: false, owed: tokens, need: 0, asking: false, retryAt: 0 };
}

/**
 * Applies a grant: repay the provisional debt, keep the rest. A short grant (the global bucket is
 * empty) defers the next ask and brings the lease back to its base size; a full grant while calls were
 * refused for want of tokens doubles it (up to maxLeaseSize), so a burst is not held back by round trips.
 */
function receive(pending: PendingLease, granted: number, now: number): void {
  const { held, ask, spec } = pending;
  held.asking = false;
  const repaid = Math.min(held.owed, granted);
  held.owed -= repaid;
  held.tokens += granted - repaid;
  held.need = 0;
  const short = ask.want - granted;
  if (short > 0) {
    held.size = leaseSize(spec);
    held.retryAt = now + Math.min(MAX_RETRY_MS, (short / spec.requests_per_second) * 1000);
  } else {
    if (held.starved) held.size = Math.min(maxLeaseSize(spec), held.size * 2);
    held.retryAt = 0;
  }
  held.starved = false;
}
