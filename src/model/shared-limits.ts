/**
 * Ports to state that must be global across processes and instances (SPEC §11): the token buckets
 * behind rate limits, the daily quotas of gateway keys, and change notices (key and token
 * revocation). The gateway leases from them (gateway/rpc/leased-limiter.ts, quota-leased.ts);
 * limits/ implements them in-process (the control process serving its workers) and on Redis
 * (several instances). They sit in model/ so neither the gateway nor a worker's IPC client imports
 * limits/.
 */

/** One bucket's ask: up to `want` tokens of the bucket refilled at `rate` per second, holding ≤ `burst`. */
export interface LeaseAsk {
  /** The bucket's name (a client address or key id; backends hash it before storing). */
  readonly bucket: string;
  /** Tokens per second (gateway `requests_per_second`). */
  readonly rate: number;
  /** Capacity in tokens; a bucket seen for the first time starts full. */
  readonly burst: number;
  /** Tokens wanted, > 0 (may be fractional). */
  readonly want: number;
}

/**
 * The global token buckets. A backend never grants more than its bucket holds: the sum of all grants
 * of a bucket over t seconds is at most burst + rate × t.
 */
export interface LeaseBackend {
  /** Grants, in the order of `asks`, each in [0, want]. Rejects when the backend is unreachable. */
  lease(asks: readonly LeaseAsk[]): Promise<number[]>;
}

/** One key's ask against its daily quota: up to `want` calls of `quota` on the UTC day `date`. */
export interface QuotaAsk {
  readonly key: string;
  /** YYYY-MM-DD (UTC). */
  readonly date: string;
  readonly quota: number;
  readonly want: number;
}

/** The global daily counters. A backend never grants beyond `quota` calls of a key on one day. */
export interface QuotaBackend {
  /** Grants, in the order of `asks`, each an integer in [0, want]. Rejects when unreachable. */
  reserve(asks: readonly QuotaAsk[]): Promise<number[]>;
}

/**
 * Change notices between processes and instances, e.g. topic `keys` after a gateway key or API token
 * changed: subscribers re-read the store at once instead of waiting for their poll. Best effort: a
 * notice may be lost (the poll stays the fallback) or arrive twice; it carries no data.
 */
export interface ChangeBus {
  publish(topic: string): void;
  /** Calls `listener` on each notice of `topic` (including this process's own); returns the unsubscribe. */
  subscribe(topic: string, listener: () => void): () => void;
}
