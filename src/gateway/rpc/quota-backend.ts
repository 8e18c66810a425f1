/**
 * The port behind global daily quotas (SPEC §11): a quota counter that answers `spend` synchronously
 * from calls it reserved asks a backend for chunks of a key's day ahead of need (quota-leased.ts). The
 * backend holds each key's count per UTC day and never grants beyond the quota, and raises a count to
 * its `QuotaSeeds` when they know of more (a lost count, calls admitted locally during an outage). Implementations: Redis
 * and in-process (limits/), and a worker's IPC backend to the control process.
 */

/** One key's request: up to `want` calls of `key`'s `quota` on the UTC day `date` (YYYY-MM-DD). */
export interface QuotaAsk {
  readonly key: string;
  readonly date: string;
  readonly quota: number;
  readonly want: number;
}

/**
 * The answer to one ask: whole calls granted (0 ≤ granted ≤ want) and the calls of the key's day still
 * unreserved after it. `left: 0` tells the asker the day is used up at the grant that used it up, so it
 * does not admit calls on credit only to learn that from the next, short, grant.
 */
export interface QuotaGrant {
  readonly granted: number;
  readonly left: number;
}

export interface QuotaBackend {
  /** One grant per ask, in the order asked. Rejects when unreachable. */
  reserve(asks: readonly QuotaAsk[]): Promise<QuotaGrant[]>;
}

/**
 * What this process knows a key spent on a day (the store's usage totals, flushed every second, and its
 * own calls): a backend starts a count it does not hold from it, so a backend that lost its counts (a
 * Redis restart) does not grant the day afresh.
 */
export interface QuotaSeeds {
  spent(date: string, key: string): number;
}
