/**
 * Daily quotas of gateway keys (`daily_quota`, SPEC §11): at most that many calls per key per UTC day
 * (each call of a batch counts; a request that does not fit is refused whole). Over quota: 429 / -32005
 * KEY_QUOTA_EXCEEDED with `Retry-After` = whole seconds until 00:00 UTC.
 *
 * `QuotaCounter` is the port (this process's counts, or a count shared through Redis). `LocalQuotaCounter`
 * counts in this process: each key's calls of the current UTC day, reset when the day changes (by the
 * injected clock). It is seeded with what the store recorded for today (`observe`), at start and after
 * each usage flush, so a restart does not reset a quota and calls made by other processes sharing the
 * store count once flushed (within ~1 s; until then each process may admit its own calls on top).
 */
import { SwitchyardError } from '../../errors/base.js';
import { utcDay } from '../../model/gateway-keys.js';

const DAY_MS = 86_400_000;

export interface QuotaCounter {
  /** Spends `cost` calls of `keyId`'s `dailyQuota` for the UTC day of `now` (ms), or throws KEY_QUOTA_EXCEEDED. */
  spend(keyId: string, dailyQuota: number, cost: number, now: number): void;
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

export class LocalQuotaCounter implements QuotaCounter {
  /** The UTC day the counts are for. */
  #date = '';
  readonly #spent = new Map<string, number>();

  spend(keyId: string, dailyQuota: number, cost: number, now: number): void {
    this.#roll(now);
    const spent = this.#spent.get(keyId) ?? 0;
    if (spent + cost > dailyQuota) throw quotaExceeded(dailyQuota, now);
    this.#spent.set(keyId, spent + cost);
  }

  /**
   * What is known to be spent on `date` (e.g. the store's total of every process): raises this
   * process's count to it, never lowers it. Counts of another day than the current one are ignored.
   */
  observe(date: string, totals: ReadonlyMap<string, number>, now: number): void {
    this.#roll(now);
    if (date !== this.#date) return;
    for (const [keyId, total] of totals) {
      if (total > (this.#spent.get(keyId) ?? 0)) this.#spent.set(keyId, total);
    }
  }

  #roll(now: number): void {
    const date = utcDay(now);
    if (date === this.#date) return;
    this.#date = date;
    this.#spent.clear();
  }
}
