/**
 * The port behind global daily quotas (SPEC §11): a quota counter that answers `spend` synchronously
 * from calls it reserved asks a backend for chunks of a key's day ahead of need (quota-leased.ts). The
 * backend holds each key's count per UTC day and never grants beyond the quota. Implementations: Redis
 * and in-process (limits/), and a worker's IPC backend to the control process.
 */

/** One key's request: up to `want` calls of `key`'s `quota` on the UTC day `date` (YYYY-MM-DD). */
export interface QuotaAsk {
  readonly key: string;
  readonly date: string;
  readonly quota: number;
  readonly want: number;
}

export interface QuotaBackend {
  /** Calls granted per ask, in the order asked (whole calls, 0 ≤ granted ≤ want). Rejects when unreachable. */
  reserve(asks: readonly QuotaAsk[]): Promise<number[]>;
}
