/**
 * The daily quota of gateway keys (SPEC §11): the `QuotaCounter` port the gateway spends a key's calls
 * through, and the refusal. A key with `daily_quota` may make that many calls per UTC day (each call of
 * a batch counts); beyond, calls are refused with KEY_QUOTA_EXCEEDED (429 / -32005) and `Retry-After` =
 * whole seconds until 00:00 UTC. Implementations: a per-process counter (gateway keys) and the global
 * one leased from Redis or the control process (quota-leased.ts).
 */
import { SwitchyardError } from '../../errors/base.js';

export interface QuotaCounter {
  /** Spends `cost` calls of `keyId`'s `dailyQuota` for the UTC day of `now` (ms), or throws KEY_QUOTA_EXCEEDED. */
  spend(keyId: string, dailyQuota: number, cost: number, now: number): void;
}

const DAY_MS = 86_400_000;

/** The UTC day of `now` (ms), YYYY-MM-DD. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** The refusal of a key over its quota at `now` (ms): Retry-After until the next UTC day. */
export function quotaExceeded(dailyQuota: number, now: number): SwitchyardError {
  const retryAfter = Math.max(1, Math.ceil((DAY_MS - (now % DAY_MS)) / 1000));
  return new SwitchyardError(
    'KEY_QUOTA_EXCEEDED',
    `This key's daily quota of ${dailyQuota} calls is used up for today (UTC); retry after ${retryAfter} s.`,
    { headers: { 'retry-after': String(retryAfter) }, details: { daily_quota: dailyQuota, retry_after: retryAfter } },
  );
}
