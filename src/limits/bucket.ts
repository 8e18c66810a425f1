/**
 * The token-bucket arithmetic of a global bucket, shared by the in-process backend (local-backend.ts);
 * the Redis backend runs the same steps in its Lua script (redis-backend.ts). A bucket holds at most
 * `burst` tokens, refills at `rate` per second from the time of its last grant, and starts full.
 * Tokens are real numbers and grants whole tokens: the fraction stays in the bucket, so no refill is
 * lost to rounding.
 */
import type { RateSpec } from '../gateway/rpc/rate-limit.js';

/** A bucket's stored state: tokens left at `at` (ms). */
export interface BucketState {
  tokens: number;
  at: number;
}

/**
 * Refills `state` (undefined = never seen: full) to `now`, takes min(want, whole tokens held) and
 * returns the grant with the new state.
 */
export function grantFrom(
  state: BucketState | undefined,
  spec: RateSpec,
  want: number,
  now: number,
): { granted: number; state: BucketState } {
  const { requests_per_second: rate, burst } = spec;
  const elapsed = state === undefined ? 0 : Math.max(0, now - state.at);
  const tokens = state === undefined ? burst : Math.min(burst, state.tokens + (elapsed / 1000) * rate);
  const granted = Math.max(0, Math.min(Math.floor(want), Math.floor(tokens)));
  return { granted, state: { tokens: tokens - granted, at: now } };
}

/** Milliseconds until a bucket left at `tokens` is full again (then it equals one never seen). */
export function msUntilFull(tokens: number, spec: RateSpec): number {
  return Math.ceil(((spec.burst - tokens) / spec.requests_per_second) * 1000);
}
