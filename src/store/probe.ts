/**
 * Whether the store answers (the StoreReadiness port of model/readiness.ts, for `GET /readyz`): a
 * `SELECT 1` on the store's connection, the same SQL on SQLite and PostgreSQL.
 * - An answer within `timeoutMs` (default 2 s) is ready; an error or no answer in time is not.
 * - One query at a time: callers arriving while one runs share its answer, and an answer is reused for
 *   `maxAgeMs` (default 1 s), so a flood of probes costs the store at most one query a second.
 * - A closed store is not ready (its query fails at once).
 */
import { sql } from 'kysely';
import { type Clock, systemClock } from '../clock.js';
import type { StoreReadiness } from '../model/readiness.js';
import type { Store } from './database.js';

export const PROBE_TIMEOUT_MS = 2_000;
export const PROBE_MAX_AGE_MS = 1_000;

export interface StoreProbeOptions {
  timeoutMs?: number;
  maxAgeMs?: number;
  /** How an answer's age is measured (monotonic; default the system clock). */
  clock?: Clock;
}

export class StoreProbe implements StoreReadiness {
  readonly #store: Store;
  readonly #timeoutMs: number;
  readonly #maxAgeMs: number;
  readonly #clock: Clock;
  #running: Promise<boolean> | undefined;
  /** The last answer and when it came (the clock's monotonic ms). */
  #last: { ready: boolean; at: number } | undefined;

  constructor(store: Store, options: StoreProbeOptions = {}) {
    this.#store = store;
    this.#timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
    this.#maxAgeMs = options.maxAgeMs ?? PROBE_MAX_AGE_MS;
    this.#clock = options.clock ?? systemClock;
  }

  storeReady(): boolean | Promise<boolean> {
    const last = this.#last;
    if (last !== undefined && this.#clock.monotonic() - last.at < this.#maxAgeMs) return last.ready;
    this.#running ??= this.#query().then((ready) => {
      this.#last = { ready, at: this.#clock.monotonic() };
      this.#running = undefined;
      return ready;
    });
    return this.#running;
  }

  async #query(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.#timeoutMs);
    });
    try {
      const answered = sql`select 1 as one`.execute(this.#store.db).then(
        () => true,
        () => false,
      );
      return await Promise.race([answered, late]);
    } catch {
      return false; // a destroyed Kysely may throw before it returns a promise
    } finally {
      clearTimeout(timer);
    }
  }
}
