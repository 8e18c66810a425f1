/**
 * Flushes the process's per-origin counters (gateway/origin-stats.ts, which also hold what the workers
 * reported) to the store every `flushMs` (default
 * 5000 ms) as one transaction of additive upserts, so processes and instances sharing a store add up.
 * A failed flush keeps its rows for the next one (logged once per outage); `stop()` flushes what is
 * left. Once an hour it deletes rows older than RETAIN_MINUTES (a day): the console shows the last hour.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { OriginStatsCollector } from '../model/origin-stats.js';
import type { Store } from '../store/database.js';
import { addStats, pruneStats } from './stats-queries.js';

export const DEFAULT_STATS_FLUSH_MS = 5_000;
export const RETAIN_MINUTES = 24 * 60;
const PRUNE_EVERY_MS = 3_600_000;

export interface StatsRecorderOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** What the gateway (and the workers' reports) count into. */
  stats: OriginStatsCollector;
  flushMs?: number;
}

export class StatsRecorder {
  readonly #options: StatsRecorderOptions;
  readonly #timer: NodeJS.Timeout;
  #flushing: Promise<void> | undefined;
  #failing = false;
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(options: StatsRecorderOptions) {
    this.#options = options;
    this.#timer = setInterval(() => void this.flush(), options.flushMs ?? DEFAULT_STATS_FLUSH_MS);
    this.#timer.unref();
  }

  /** Writes the pending counts now (one flush at a time; a second caller waits for the running one). */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#flushing;
    await this.flush();
  }

  async #flush(): Promise<void> {
    const { store, clock, logger } = this.#options;
    const rows = this.#options.stats.drain();
    try {
      await addStats(store.db, rows);
    } catch (err) {
      // The transaction wrote none of them: keep them for the next flush.
      this.#options.stats.add(rows);
      if (!this.#failing) logger.error('origin statistics: cannot write to the store; counts kept', { err });
      this.#failing = true;
      return;
    }
    const now = clock.now();
    if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = now;
      await pruneStats(store.db, Math.floor(now / 60_000) - RETAIN_MINUTES).catch((err: unknown) =>
        logger.warn('origin statistics: pruning old rows failed', { err }),
      );
    }
    if (this.#failing) logger.info('origin statistics: store reachable again');
    this.#failing = false;
  }
}
