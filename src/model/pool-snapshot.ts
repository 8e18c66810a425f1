/**
 * The part of every PoolDirectory that does not care where pools come from: an immutable list of pools,
 * the by-name index the gateway looks up on its hot path, the by-id index monitors and health views
 * look up, and change listeners. `replace()` swaps the
 * whole snapshot at once (readers never see half an update) and then tells each listener; a listener
 * that throws is reported to `onListenerError` and does not stop the others.
 *
 * Users: StaticPoolDirectory (a fixed list, static-directory.ts) and StorePoolDirectory (the store,
 * refreshed on change, pools/store-directory.ts).
 */
import type { Pool, PoolDirectory } from './pool.js';

export interface PoolSnapshotOptions {
  /** Only this account's pools are found by name (the routing account); all pools when absent. */
  accountId?: string;
  /** Default: rethrow (fixed lists in tests want to see the failure). */
  onListenerError?: (err: unknown) => void;
}

export class PoolSnapshot implements PoolDirectory {
  readonly #accountId: string | undefined;
  readonly #onListenerError: (err: unknown) => void;
  readonly #listeners = new Set<() => void>();
  #all: readonly Pool[] = [];
  #byName = new Map<string, Pool>();
  #byId = new Map<string, Pool>();

  constructor(options: PoolSnapshotOptions = {}) {
    this.#accountId = options.accountId;
    this.#onListenerError =
      options.onListenerError ??
      ((err) => {
        throw err;
      });
  }

  poolByName(name: string): Pool | undefined {
    return this.#byName.get(name);
  }

  allPools(): readonly Pool[] {
    return this.#all;
  }

  poolById(id: string): Pool | undefined {
    return this.#byId.get(id);
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  replace(pools: readonly Pool[]): void {
    this.#all = Object.freeze([...pools]);
    const named = this.#accountId === undefined ? pools : pools.filter((pool) => pool.account_id === this.#accountId);
    this.#byName = new Map(named.map((pool) => [pool.name, pool]));
    this.#byId = new Map(pools.map((pool) => [pool.id, pool]));
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch (err) {
        this.#onListenerError(err);
      }
    }
  }

  clearListeners(): void {
    this.#listeners.clear();
  }
}
