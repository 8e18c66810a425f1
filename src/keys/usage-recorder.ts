/**
 * Usage of gateway keys (KeyUsageSink): the gateway counts each call of a key in memory (per key, UTC
 * day by the injected clock, and network: requests, and errors = calls answered with a JSON-RPC error);
 * every `flushMs` (default 1000 ms) the counts are added to the store in one transaction of additive
 * upserts (usage-queries.ts), so processes sharing the store add up. A failed flush keeps the counts
 * for the next one (logged once per outage); `stop()` flushes what is left, so nothing counted is lost
 * on a clean shutdown. Each flush also sets `last_used_on` of the keys it carried (at most once a
 * minute per key) and hands today's store totals of every key to `observeTotals` (the local quota
 * counter), so quotas see calls made by other processes and survive a restart.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { type KeyUsageSink, utcDay } from '../model/gateway-keys.js';
import type { Store } from '../store/database.js';
import { touchGatewayKeys } from './key-queries.js';
import { addUsage, requestsOn, type UsageRow } from './usage-queries.js';

export const DEFAULT_USAGE_FLUSH_MS = 1000;
const TOUCH_INTERVAL_MS = 60_000;

export interface UsageRecorderOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  flushMs?: number;
  /**
   * Told the store's request totals of every key for today (UTC), at start and after each flush: the
   * local quota counter's seed (gateway/rpc/quota.ts `LocalQuotaCounter.observe`).
   */
  observeTotals?: (date: string, totals: ReadonlyMap<string, number>) => void;
}

export class UsageRecorder implements KeyUsageSink {
  readonly #options: UsageRecorderOptions;
  /** Pending counts by `key_id \n date \n network`. */
  #pending = new Map<string, UsageRow>();
  readonly #touched = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #failing = false;

  private constructor(options: UsageRecorderOptions) {
    this.#options = options;
  }

  /** Seeds the quota counter from the store (errors propagate) and starts flushing. */
  static async start(options: UsageRecorderOptions): Promise<UsageRecorder> {
    const recorder = new UsageRecorder(options);
    await recorder.#seedQuota();
    recorder.#timer = setInterval(() => void recorder.flush(), options.flushMs ?? DEFAULT_USAGE_FLUSH_MS);
    recorder.#timer.unref();
    return recorder;
  }

  count(keyId: string, network: string, ok: boolean, calls = 1): void {
    const date = utcDay(this.#options.clock.now());
    const id = `${keyId}\n${date}\n${network}`;
    let row = this.#pending.get(id);
    if (row === undefined) {
      row = { key_id: keyId, date, network, requests: 0, errors: 0 };
      this.#pending.set(id, row);
    }
    row.requests += calls;
    if (!ok) row.errors += calls;
  }

  /** Writes the pending counts now (one flush at a time; a second caller waits for the running one). */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#flushing;
    await this.flush();
  }

  async #flush(): Promise<void> {
    const { store, clock } = this.#options;
    const rows = [...this.#pending.values()];
    this.#pending = new Map();
    try {
      await addUsage(store.db, rows);
    } catch (err) {
      // Keep the counts for the next flush: the transaction wrote none of them.
      for (const row of rows) this.#merge(row);
      this.#failed(err);
      return;
    }
    try {
      const now = clock.now();
      const touch = [...new Set(rows.map((row) => row.key_id))].filter(
        (id) => (this.#touched.get(id) ?? Number.NEGATIVE_INFINITY) + TOUCH_INTERVAL_MS <= now,
      );
      if (touch.length > 0) {
        await touchGatewayKeys(store.db, touch, new Date(now).toISOString());
        for (const id of touch) this.#touched.set(id, now);
      }
      await this.#seedQuota();
    } catch (err) {
      this.#failed(err);
      return;
    }
    if (this.#failing) this.#options.logger.info('gateway key usage: store reachable again');
    this.#failing = false;
  }

  #failed(err: unknown): void {
    if (!this.#failing)
      this.#options.logger.error('gateway key usage: cannot write to the store; counts kept', { err });
    this.#failing = true;
  }

  async #seedQuota(): Promise<void> {
    const observe = this.#options.observeTotals;
    if (observe === undefined) return;
    const date = utcDay(this.#options.clock.now());
    observe(date, await requestsOn(this.#options.store.db, date));
  }

  #merge(row: UsageRow): void {
    const id = `${row.key_id}\n${row.date}\n${row.network}`;
    const pending = this.#pending.get(id);
    if (pending === undefined) this.#pending.set(id, row);
    else {
      pending.requests += row.requests;
      pending.errors += row.errors;
    }
  }
}
