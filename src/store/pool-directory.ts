/**
 * The store-backed PoolDirectory the gateway routes through: an in-memory snapshot of every pool,
 * read synchronously on the hot path, refreshed
 *   - at once when this process changes pools (the API awaits `refresh()` after each commit), and
 *   - by polling every `pollMs` (default 1000 ms) for changes made by other processes sharing the
 *     database (CLI, other `serve` processes on PostgreSQL). A poll reads only `id, version` of each
 *     pool and reloads everything when that fingerprint differs (every write bumps `version`; inserts
 *     and deletes change the id set).
 * `poolByName` answers for the routing account (`account_id` in the config) only. If the store is
 * unreachable the last snapshot stays in use and the failure is logged (once per outage).
 */
import type { Pool, PoolDirectory } from '../balancing/model.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics.js';
import type { Store } from './database.js';
import { listAllPools, poolVersions } from './pools.js';

export const DEFAULT_POLL_MS = 1000;

export interface StorePoolDirectoryOptions {
  store: Store;
  /** The routing account: `poolByName` looks up its pools. */
  accountId: string;
  logger: Logger;
  pollMs?: number;
  /** Registers `switchyard_pools` (pools in the snapshot, all accounts) and a reload counter. */
  metrics?: MetricsRegistry;
}

export class StorePoolDirectory implements PoolDirectory {
  readonly #store: Store;
  readonly #accountId: string;
  readonly #logger: Logger;
  readonly #listeners = new Set<() => void>();
  #all: readonly Pool[] = [];
  #byName = new Map<string, Pool>();
  #versions = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  /** Serialises reloads: a refresh asked for during a reload runs once more after it. */
  #running: Promise<void> | undefined;
  #again = false;
  #failing = false;
  #reloads: { inc(): void } = { inc() {} };

  private constructor(options: StorePoolDirectoryOptions) {
    this.#store = options.store;
    this.#accountId = options.accountId;
    this.#logger = options.logger;
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
    return this.#byName.get(name);
  }

  allPools(): readonly Pool[] {
    return this.#all;
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Reloads now (after an in-process write). Never throws; resolves when the snapshot is current. */
  refresh(): Promise<void> {
    if (this.#running !== undefined) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false;
          await this.#guarded(() => this.#reload());
        } while (this.#again);
      } finally {
        this.#running = undefined;
      }
    })();
    return this.#running;
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#listeners.clear();
  }

  async #poll(): Promise<void> {
    if (this.#running !== undefined) return;
    await this.#guarded(async () => {
      const versions = await poolVersions(this.#store.db);
      if (!sameVersions(versions, this.#versions)) await this.refresh();
    });
  }

  async #guarded(work: () => Promise<void>): Promise<void> {
    try {
      await work();
      if (this.#failing) this.#logger.info('pool directory: store reachable again');
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) this.#logger.error('pool directory: cannot read pools; keeping the last snapshot', { err });
      this.#failing = true;
    }
  }

  async #reload(): Promise<void> {
    const rows = await listAllPools(this.#store.db);
    const versions = new Map(rows.map((row) => [row.pool.id, row.version]));
    if (sameVersions(versions, this.#versions) && this.#all.length === rows.length) return;
    const pools = rows.map((row) => Object.freeze(row.pool));
    this.#all = Object.freeze(pools);
    this.#byName = new Map(
      pools.filter((pool) => pool.account_id === this.#accountId).map((pool) => [pool.name, pool] as const),
    );
    this.#versions = versions;
    this.#reloads.inc();
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch (err) {
        this.#logger.error('pool directory listener failed', { err });
      }
    }
  }
}

function sameVersions(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, version] of a) if (b.get(id) !== version) return false;
  return true;
}
