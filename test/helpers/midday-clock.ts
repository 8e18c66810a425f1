/**
 * A clock that runs at real speed from noon UTC of a fixed day, for tests of per-day counts (daily
 * quotas) that also need time to pass (rate limits, flush intervals, bounded waits). On the real clock
 * such a test breaks when a run crosses 00:00 UTC: the count starts again in the new day.
 */
import type { Clock } from '../../src/clock.js';

export function middayClock(day = '2026-05-10'): Clock {
  const start = new Date(`${day}T12:00:00Z`).getTime();
  const started = performance.now();
  return { now: () => start + Math.floor(performance.now() - started), monotonic: () => performance.now() };
}
