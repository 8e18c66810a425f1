/**
 * The store-backed PoolDirectory the gateway routes through: an in-memory snapshot of every pool,
 * read synchronously on the hot path, refreshed
 *   - at once when this process changes pools (the API awaits `refresh()` after each commit), and
 *   - by polling every `pollMs` (default 250 ms) for changes made by other processes sharing the
 *     database (`config apply` and other CLI commands, other `serve` processes on PostgreSQL), so such a
 *     change routes within 1 s. A poll reads only `id, version` of each
 *     pool and reloads everything when that fingerprint differs (every write bumps `version`; inserts
 *     and deletes change the id set).
 * `poolByName` answers for the routing account (`account_id` in the config) only. If the store is
 * unreachable the last snapshot stays in use and the failure is logged (once per outage). A pool row
 * that cannot be decoded (pools/pool-queries.ts) is left out of the snapshot and logged whenever the pools
 * change; the other pools keep routing.
 */

import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { Pool, PoolDirectory } from '../model/pool.js';
import { PoolSnapshot } from '../model/pool-snapshot.js';
import type { Store } from '../store/database.js';
import { PolledReload, sameVersions } from '../store/polled-reload.js';
import type { Opener } from '../store/store-secrets.js';
import { listAllPools, poolVersions } from './pool-queries.js';

export const DEFAULT_POLL_MS = 250;

export interface StorePoolDirectoryOptions {
  store: Store;
  /**
   * Opens the origins' sealed secrets. A reload that meets secrets sealed with a key this process does
   * not hold fails as a whole (SECRETS_KEY_STALE, logged): the last snapshot keeps routing.
   */
  secrets: Opener;
  /** The routing account: `poolByName` looks up its pools. */
  accountId: string;
  logger: Logger;
  pollMs?: number;
  /** Registers `switchyard_pools` (pools in the snapshot, all accounts) and a reload counter. */
  metrics?: MetricsRegistry;
}

export class StorePoolDirectory implements PoolDirectory {
  readonly #store: Store;
  readonly #secrets: Opener;
  readonly #logger: Logger;
  readonly #snapshot: PoolSnapshot;
  #versions = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  /** One reload at a time; store failures logged once per outage (store/polled-reload.ts). */
  readonly #reloader: PolledReload;
  #reloads: { inc(): void } = { inc() {} };

  private constructor(options: StorePoolDirectoryOptions) {
    this.#store = options.store;
    this.#secrets = options.secrets;
    this.#logger = options.logger;
    this.#reloader = new PolledReload({
      reload: () => this.#reload(),
      logger: options.logger,
      failed: 'pool directory: cannot read pools; keeping the last snapshot',
      recovered: 'pool directory: store reachable again',
    });
    this.#snapshot = new PoolSnapshot({
      accountId: options.accountId,
      onListenerError: (err) => this.#logger.error('pool directory listener failed', { err }),
    });
  }

  /** Loads the first snapshot (errors propagate: serve must not start blind) and starts polling. */
  static async start(options: StorePoolDirectoryOptions): Promise<StorePoolDirectory> {
    const directory = new StorePoolDirectory(options);
    if (options.metrics !== undefined) {
      options.metrics.gauge(
        'switchyard_pools',
        'Pools in the routing snapshot (all accounts)',
        [],
        () => directory.allPools().length,
      );
      directory.#reloads = options.metrics.counter(
        'switchyard_pool_snapshot_reloads_total',
        'Times the routing snapshot of pools was reloaded after a change',
      );
    }
    await directory.#reload();
    const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    directory.#timer = setInterval(() => void directory.#poll(), pollMs);
    directory.#timer.unref();
    return directory;
  }

  poolByName(name: string): Pool | undefined {
    return this.#snapshot.poolByName(name);
  }

  allPools(): readonly Pool[] {
    return this.#snapshot.allPools();
  }

  poolById(id: string): Pool | undefined {
    return this.#snapshot.poolById(id);
  }

  onChange(listener: () => void): () => void {
    return this.#snapshot.onChange(listener);
  }

  /** Reloads now (after an in-process write). Never throws; resolves when the snapshot is current. */
  refresh(): Promise<void> {
    return this.#reloader.refresh();
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#snapshot.clearListeners();
  }

  #poll(): Promise<void> {
    return this.#reloader.poll(async () => !sameVersions(await poolVersions(this.#store.db), this.#versions));
  }

  async #reload(): Promise<void> {
    const corrupt: { pool_id: string; reason: string }[] = [];
    const { pools, versions } = await listAllPools(this.#store.db, this.#secrets, (row) => corrupt.push(row));
    if (sameVersions(versions, this.#versions)) return;
    for (const row of corrupt) {
      this.#logger.error('pool directory: skipping a pool whose stored settings cannot be read', row);
    }
    this.#versions = versions;
    this.#reloads.inc();
    this.#snapshot.replace(pools.map((pool) => Object.freeze(pool)));
  }
}
