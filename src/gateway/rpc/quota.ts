/**
 * Daily quotas of gateway keys (`daily_quota`, SPEC §11): at most that many calls per key per UTC day
 * (each call of a batch counts; a request that does not fit is refused whole). Over quota: 429 / -32005
 * KEY_QUOTA_EXCEEDED with `Retry-After` = whole seconds until 00:00 UTC.
 *
 * `QuotaCounter` is the port (this process's counts, or a count shared through Redis). `LocalQuotaCounter`
 * counts in this process: each key's calls per UTC day of the injected clock (`DayCounts`, which keeps
 * the two newest days). It is seeded with what the store recorded for today (`observe`), at start and after
 * each usage flush, so a restart does not reset a quota and calls made by other processes sharing the
 * store count once flushed (within ~1 s; until then each process may admit its own calls on top).
 */
import { SwitchyardError } from '../../errors/base.js';
import { utcDay } from '../../model/gateway-keys.js';

const DAY_MS = 86_400_000;

export interface QuotaCounter {
  /**
   * Spends `cost` calls of `keyId`'s `dailyQuota` for the UTC day of `now` (ms), or throws KEY_QUOTA_EXCEEDED
   * (a shared counter may also throw a transient RATE_LIMITED where `admit` would wait).
   */
  spend(keyId: string, dailyQuota: number, cost: number, now: number): void;
  /**
   * As `spend`, but a shared counter that cannot decide before its reserve in flight answers returns a
   * promise instead (settled within the backend's deadline); rejects or throws KEY_QUOTA_EXCEEDED.
   */
  admit(keyId: string, dailyQuota: number, cost: number, now: number): void | Promise<void>;
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
  readonly #counts = new DayCounts();

  spend(keyId: string, dailyQuota: number, cost: number, now: number): void {
    const date = utcDay(now);
    const spent = this.#counts.spent(date, keyId);
    if (spent + cost > dailyQuota) throw quotaExceeded(dailyQuota, now);
    this.#counts.add(date, keyId, cost);
  }

  admit(keyId: string, dailyQuota: number, cost: number, now: number): void {
    this.spend(keyId, dailyQuota, cost, now);
  }

  /** Raises `keyId`'s count on `date` to what is known to be spent (or reserved) by all, never lowers it. */
  raise(date: string, keyId: string, total: number): void {
    this.#counts.raise(date, keyId, total);
  }

  /** Calls of `keyId` known to be spent on `date`: the store's totals and this process's own. */
  spent(date: string, keyId: string): number {
    return this.#counts.spent(date, keyId);
  }

  /**
   * What is known to be spent on `date` (e.g. the store's total of every process): raises this
   * process's count to it, never lowers it.
   */
  observe(date: string, totals: ReadonlyMap<string, number>): void {
    this.#counts.observe(date, totals);
  }
}

/**
 * Calls spent per key and UTC day, for the two newest days asked about (a day's calls may straddle
 * midnight): a newer day drops the oldest when first asked about, and a day older than both is not
 * kept. This process's counter (above) and the control process's quota backend
 * (limits/local-backend.ts) count in it.
 */
export class DayCounts {
  /** date → key → calls spent. */
  readonly #days = new Map<string, Map<string, number>>();

  spent(date: string, key: string): number {
    return this.#days.get(date)?.get(key) ?? 0;
  }

  add(date: string, key: string, calls: number): void {
    const day = this.#day(date);
    day?.set(key, (day.get(key) ?? 0) + calls);
  }

  /** Raises each key's count on `date` to what is known to be spent (e.g. the store's totals), never lowers it. */
  observe(date: string, totals: ReadonlyMap<string, number>): void {
    for (const [key, total] of totals) this.raise(date, key, total);
  }

  /** Raises `key`'s count on `date` to `total` when it is below, never lowers it. */
  raise(date: string, key: string, total: number): void {
    const day = this.#day(date);
    if (day !== undefined && total > (day.get(key) ?? 0)) day.set(key, total);
  }

  /** The day's counts; undefined when it is older than the two newest days. */
  #day(date: string): Map<string, number> | undefined {
    let day = this.#days.get(date);
    if (day !== undefined) return day;
    day = new Map();
    this.#days.set(date, day);
    while (this.#days.size > 2) this.#days.delete([...this.#days.keys()].sort()[0] as string);
    return this.#days.get(date);
  }
}
