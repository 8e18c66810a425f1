/**
 * The token-bucket arithmetic of a global bucket, shared by the in-process backend (local-backend.ts);
 * the Redis backend runs the same steps in its Lua script (redis-backend.ts). A bucket holds at most
 * `burst` tokens, refills at `rate` per second from the time of its last grant, and starts full.
 * Tokens are real numbers: a grant may be fractional, so no refill is lost to rounding.
 */

/** A bucket's stored state: tokens left at `at` (ms). */
export interface BucketState {
  tokens: number;
  at: number;
}

/**
 * Refills `state` (undefined = never seen: full) to `now`, takes min(want, tokens) and returns the
 * grant with the new state.
 */
export function grantFrom(
  state: BucketState | undefined,
  ask: { rate: number; burst: number; want: number },
  now: number,
): { granted: number; state: BucketState } {
  const elapsed = state === undefined ? 0 : Math.max(0, now - state.at);
  const tokens = state === undefined ? ask.burst : Math.min(ask.burst, state.tokens + (elapsed / 1000) * ask.rate);
  const granted = Math.max(0, Math.min(ask.want, tokens));
  return { granted, state: { tokens: tokens - granted, at: now } };
}

/** Milliseconds until a bucket left at `tokens` is full again (then it equals one never seen). */
export function msUntilFull(tokens: number, ask: { rate: number; burst: number }): number {
  return Math.ceil(((ask.burst - tokens) / ask.rate) * 1000);
}
