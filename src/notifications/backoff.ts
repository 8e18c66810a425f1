/**
 * Retry schedule of a failed delivery (connection error, timeout, non-2xx answer, SMTP error).
 *
 * After the n-th failed attempt the next one is due in min(BASE · 2^(n-1), CAP), spread by ±JITTER so
 * many deliveries failing together do not retry in lockstep. Roughly: 4 s, 8 s, 16 s, 32 s, 64 s, 2 m,
 * 4 m, 8.5 m, 17 m, 34 m, then every hour. A delivery is retried until it is RETRY_WINDOW (24 h) old:
 * the first failure at or after that age dead-letters it (status `dead`, logged as an error). The
 * window is measured from when the delivery was written, so every alert gets at least a day of tries.
 * A `Retry-After` answer (seconds) is honoured as a lower bound, up to CAP.
 */
export const RETRY_BASE_MS = 4_000;
export const RETRY_CAP_MS = 3_600_000;
export const RETRY_JITTER = 0.2;
export const RETRY_WINDOW_MS = 24 * 3_600_000;

/** Delay before the next attempt after `failures` failed attempts (≥ 1). `random` in [0, 1). */
export function retryDelayMs(failures: number, random: number = Math.random(), retryAfterMs?: number): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 30);
  const base = Math.min(RETRY_BASE_MS * 2 ** exponent, RETRY_CAP_MS);
  const jittered = Math.round(base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random));
  const floor = retryAfterMs === undefined ? 0 : Math.min(retryAfterMs, RETRY_CAP_MS);
  return Math.max(jittered, floor);
}

/** True when a delivery written at `createdAtMs` has had its full retry window by `nowMs`. */
export function retryWindowOver(createdAtMs: number, nowMs: number): boolean {
  return nowMs - createdAtMs >= RETRY_WINDOW_MS;
}
