/**
 * The sane bounds of a rate limit and a daily quota (SPEC §20 "Input edges"), one rule for every place
 * they are given: the config file (`gateway.rate_limit`), the gateway keys API (`rate_limit`,
 * `daily_quota`) and `switchyard key create`. A value outside them is refused with a message naming the
 * range (API 400 / 1002, a config error naming the path, a CLI usage error):
 * - `requests_per_second`: 0.001 – 1,000,000 (a call per 1000 s at the slowest; below it, Retry-After
 *   grows without bound — 5e-324 gave `Retry-After: Infinity`);
 * - `burst`: a whole number of calls, 1 – 1,000,000,000;
 * - `daily_quota`: a whole number of calls, 1 – 10^12.
 */
import { z } from 'zod';

export interface LimitRange {
  readonly min: number;
  readonly max: number;
  readonly whole: boolean;
}

export const REQUESTS_PER_SECOND: LimitRange = { min: 0.001, max: 1_000_000, whole: false };
export const BURST: LimitRange = { min: 1, max: 1_000_000_000, whole: true };
export const DAILY_QUOTA: LimitRange = { min: 1, max: 1_000_000_000_000, whole: true };

/** "a whole number from 1 to 1000000000": what a value outside `range` is told. */
export function rangeText(range: LimitRange): string {
  return `must be ${range.whole ? 'a whole number' : 'a number'} from ${range.min} to ${range.max}`;
}

function ranged(range: LimitRange): z.ZodNumber {
  const message = rangeText(range);
  const number = z.number({ error: message });
  return (range.whole ? number.int(message) : number).min(range.min, message).max(range.max, message);
}

export const requestsPerSecond = ranged(REQUESTS_PER_SECOND);
export const burst = ranged(BURST);
export const dailyQuota = ranged(DAILY_QUOTA);

/** A rate limit as written (config, API): `burst` optional, its default applied by the reader. */
export const rateLimitInput = z.strictObject({ requests_per_second: requestsPerSecond, burst: burst.optional() });

/** The same rule for a number given outside a schema (a CLI flag): its message, or undefined when it fits. */
export function outOfRange(range: LimitRange, value: number): string | undefined {
  const fits = Number.isFinite(value) && value >= range.min && value <= range.max;
  return fits && (!range.whole || Number.isInteger(value)) ? undefined : rangeText(range);
}
