/**
 * A PoolDirectory over a fixed list of pools, for routing tests and for embedding the gateway without a
 * store (`serve` uses the store-backed directory, src/store/pool-directory.ts). Pool ids are derived from
 * account and name (sha256, 32 hex), so they are stable across restarts. `replace()` swaps the snapshot
 * and notifies listeners.
 */
import { createHash } from 'node:crypto';
import type { PoolConfig } from '../config/schema.js';
import type { Origin, Pool, PoolDirectory } from './model.js';

export class StaticPoolDirectory implements PoolDirectory {
  #byName = new Map<string, Pool>();
  #all: readonly Pool[] = [];
  #listeners = new Set<() => void>();

  constructor(pools: readonly Pool[] = []) {
    this.replace(pools);
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

  replace(pools: readonly Pool[]): void {
    this.#all = Object.freeze([...pools]);
    this.#byName = new Map(pools.map((pool) => [pool.name, pool]));
    for (const listener of this.#listeners) listener();
  }
}

export function poolIdFor(accountId: string, name: string): string {
  return createHash('sha256').update(`${accountId}/${name}`).digest('hex').slice(0, 32);
}

/** A config pool as a model Pool with Cloudflare defaults filled in (enabled, weight 1, random steering). */
export function poolFromConfig(input: PoolConfig, accountId: string, now: string): Pool {
  const origins: Origin[] = input.origins.map((origin) => ({
    name: origin.name,
    address: origin.address,
    enabled: origin.enabled ?? true,
    weight: origin.weight ?? 1,
    header: origin.header ?? {},
  }));
  return {
    id: poolIdFor(accountId, input.name),
    account_id: accountId,
    name: input.name,
    description: input.description ?? '',
    enabled: input.enabled ?? true,
    minimum_origins: input.minimum_origins ?? 1,
    monitor: null,
    notification_email: input.notification_email ?? '',
    notification_filter: input.notification_filter ?? null,
    origins,
    origin_steering: { policy: input.origin_steering?.policy ?? 'random' },
    check_regions: null,
    created_on: now,
    modified_on: now,
  };
}
