/**
 * How far this process's clock is from the store's: the check that makes "instances' clocks agree (NTP)"
 * visible. Instances on one store compare times each took from its own clock: affinity entries' `until`
 * (relayed through Redis), the divergence "seen late" rule (incidents/divergence.ts), the UTC day a key's
 * quota is counted in. Comparing each with the one clock they share, PostgreSQL's, bounds how far apart
 * any two of them are. On SQLite nothing is checked: the store's file is on this machine, so every
 * process that opens it reads the same clock.
 *
 * - At `start()` and every CHECK_INTERVAL_MS (60 s): t0 = clock.now(), the store's `clock_timestamp()`,
 *   t1 = clock.now(). The offset (this clock minus the store's) is (t0 + t1) / 2 − store time, known to
 *   ± (t1 − t0) / 2.
 * - `switchyard_clock_offset_seconds`: the last offset (no sample before the first answer).
 * - An offset beyond OFFSET_WARN_MS (1 s) by more than its uncertainty logs a warning once, when it
 *   starts ("clock differs from the store's", with `offset_ms`); back within it, an info line. A query
 *   that fails or is not answered within the uncertainty bound changes nothing (logged at debug).
 * - One timer (unref'd); `stop()` ends it and waits for a check in flight.
 */
import { sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { Store } from './database.js';

export const CHECK_INTERVAL_MS = 60_000;
export const OFFSET_WARN_MS = 1_000;

export interface ClockOffsetOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  metrics: MetricsRegistry;
}

export class ClockOffsetCheck {
  readonly #options: ClockOffsetOptions;
  #offsetMs: number | undefined;
  #warned = false;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(options: ClockOffsetOptions) {
    this.#options = options;
    options.metrics.gauge(
      'switchyard_clock_offset_seconds',
      "This process's clock minus the store's (PostgreSQL), last measured",
      [],
      () => (this.#offsetMs === undefined ? [] : [{ labels: {}, value: this.#offsetMs / 1000 }]),
    );
  }

  /** The last offset measured, in ms (this clock minus the store's); undefined before the first. */
  get offsetMs(): number | undefined {
    return this.#offsetMs;
  }

  /** Checks once (awaited), then every CHECK_INTERVAL_MS. Does nothing on SQLite. */
  async start(): Promise<void> {
    if (this.#options.store.dialect !== 'postgres') return;
    await this.check();
    if (this.#stopped) return;
    this.#timer = setInterval(() => void this.check(), CHECK_INTERVAL_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running;
  }

  /** One measurement (a check already running is joined); nothing on SQLite. */
  check(): Promise<void> {
    if (this.#options.store.dialect !== 'postgres') return Promise.resolve();
    this.#running ??= this.#measure().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #measure(): Promise<void> {
    const { store, clock, logger } = this.#options;
    let storeMs: number;
    const t0 = clock.now();
    try {
      const { rows } = await sql<{ ms: number }>`
        select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms`.execute(store.db);
      storeMs = Number(rows[0]?.ms);
    } catch (err) {
      logger.debug('clock offset check failed', { err });
      return;
    }
    const t1 = clock.now();
    const uncertainty = (t1 - t0) / 2;
    if (!Number.isFinite(storeMs) || uncertainty > OFFSET_WARN_MS) {
      logger.debug('clock offset check inconclusive', { round_trip_ms: t1 - t0 });
      return;
    }
    const offset = Math.round((t0 + t1) / 2 - storeMs);
    this.#offsetMs = offset;
    const beyond = Math.abs(offset) - uncertainty > OFFSET_WARN_MS;
    if (beyond && !this.#warned) {
      logger.warn("clock differs from the store's: instances' times no longer compare (keep clocks in sync, NTP)", {
        offset_ms: offset,
        limit_ms: OFFSET_WARN_MS,
      });
    } else if (!beyond && this.#warned) {
      logger.info("clock agrees with the store's again", { offset_ms: offset });
    }
    this.#warned = beyond;
  }
}
