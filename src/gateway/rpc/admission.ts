/**
 * What a request spends before its calls run (handler.ts): rate-limit tokens, and for gateway keys
 * (SPEC §11) their daily quota; and what each admitted call of a key counts to its usage.
 *
 * - Rate limit: `gateway.rate_limit` per client (API key, gateway key id, else remote address) through
 *   the Limiter port (rate-limit.ts). A gateway key's own `rate_limit` replaces it for the key's calls
 *   (bucket = the key id); a key without one takes `gateway.rate_limit` in that bucket.
 * - Quota: after the rate limit, a key with `daily_quota` spends the request's calls from it (quota.ts,
 *   429 KEY_QUOTA_EXCEEDED); a request's calls (`admit`) may wait for a shared quota's reserve in flight
 *   (quota-leased.ts), never longer than the backend's deadline. A WebSocket handshake takes a rate-limit
 *   token but no quota (it is no call).
 * - Usage: every call admitted past both counts once to the key (`KeyUsageSink`), `ok` false when its
 *   answer is a JSON-RPC error — made by the gateway (invalid request, method policy, params, upstream
 *   failure) or the origin's own `error` answer. A notification has no answer and counts as ok; a large
 *   streamed answer is passed on unread and counts as ok. A body refused whole (unknown or retired
 *   network, unparsable JSON, empty or oversized batch, rate limit, quota, and the 401/403 of the edge)
 *   counts nothing.
 * - Notifications (SPEC §20): each subscription notification sent is priced as one call (`notification`).
 * A client that is no usable key's id (the table is asked by id) is limited as before and counts nothing.
 */
import type { Clock } from '../../clock.js';
import { SwitchyardError } from '../../errors/base.js';
import type { GatewayKeyRecord, GatewayKeyTable, KeyUsageSink } from '../../model/gateway-keys.js';
import type { QuotaCounter } from './quota.js';
import type { Limiter, RateSpec } from './rate-limit.js';

export interface CallAdmissionOptions {
  /** `gateway.rate_limit` (`spec`; none: unlimited except keys with their own) and the buckets. */
  rateLimit?: { spec: RateSpec | undefined; limiter: Limiter } | undefined;
  /** Gateway keys: the table the client's key is found in (by id), its daily quota and its usage. */
  keys?: { table: GatewayKeyTable; quota: QuotaCounter; usage: KeyUsageSink } | undefined;
  clock: Clock;
}

export class CallAdmission {
  readonly #options: CallAdmissionOptions;

  constructor(options: CallAdmissionOptions) {
    this.#options = options;
  }

  /** Takes `cost` calls from the client's bucket (RATE_LIMITED). Returns the client's gateway key, if it is one. */
  take(client: string, cost: number): GatewayKeyRecord | undefined {
    const key = this.#options.keys?.table.byId(client);
    this.#rate(client, key, cost);
    return key;
  }

  /**
   * One subscription notification sent to `client` on `network`, priced as one call (SPEC §20): a
   * rate-limit token when one is left (a notification is never held back by the rate limit; it leaves
   * fewer tokens for the client's own calls), one call of its key's daily quota, and one ok call of the
   * key's usage. Throws KEY_QUOTA_EXCEEDED when the quota is known to be spent; a shared quota that must
   * wait for its reserve in flight (quota-leased.ts) answers with a promise instead, rejected with
   * KEY_QUOTA_EXCEEDED when the reserve refuses — never a transient refusal.
   */
  notification(client: string, network: string): void | Promise<void> {
    const key = this.#options.keys?.table.byId(client);
    try {
      this.#rate(client, key, 1);
    } catch (err) {
      if (!(err instanceof SwitchyardError && err.code === 'RATE_LIMITED')) throw err;
    }
    const waited = this.#admitQuota(key, 1);
    if (waited === undefined) {
      this.count(key, network, true);
      return;
    }
    return waited.then(() => this.count(key, network, true));
  }

  #rate(client: string, key: GatewayKeyRecord | undefined, cost: number): void {
    const limit = this.#options.rateLimit;
    const spec = key?.rate_limit ?? limit?.spec;
    if (limit !== undefined && spec !== undefined) limit.limiter.take(client, spec, cost);
  }

  #admitQuota(key: GatewayKeyRecord | undefined, cost: number): void | Promise<void> {
    if (key === undefined || key.daily_quota === null || this.#options.keys === undefined) return;
    return this.#options.keys.quota.admit(key.id, key.daily_quota, cost, this.#options.clock.now());
  }

  /**
   * As `take` for a request's calls, but a key's shared quota may answer later (quota-leased.ts: the
   * calls wait for the reserve in flight): then a promise of the key, rejected when refused.
   */
  admit(client: string, cost: number): GatewayKeyRecord | undefined | Promise<GatewayKeyRecord | undefined> {
    const key = this.take(client, cost);
    const waited = this.#admitQuota(key, cost);
    return waited === undefined ? key : waited.then(() => key);
  }

  /** Counts one admitted call of `key` (none: nothing to count). */
  count(key: GatewayKeyRecord | undefined, network: string, ok: boolean): void {
    if (key !== undefined) this.#options.keys?.usage.count(key.id, network, ok);
  }
}
