/**
 * A PoolDirectory over a fixed list of pools, for routing tests and for embedding the gateway without a
 * store (`serve` uses the store-backed directory, src/pools/store-directory.ts). Pool ids are derived from
 * account and name (sha256, 32 hex), so they are stable across restarts. `replace()` swaps the snapshot
 * and notifies listeners.
 */
import { createHash } from 'node:crypto';
import type { Pool } from '../model/pool.js';
import { poolFieldsFromConfig } from '../model/pool-defaults.js';
import type { PoolInput } from '../model/pool-input.js';
import { PoolSnapshot } from '../model/pool-snapshot.js';

export class StaticPoolDirectory extends PoolSnapshot {
  constructor(pools: readonly Pool[] = []) {
    super();
    this.replace(pools);
  }
}

export function poolIdFor(accountId: string, name: string): string {
  return createHash('sha256').update(`${accountId}/${name}`).digest('hex').slice(0, 32);
}

/** A config pool as a model Pool with Cloudflare defaults filled in (pool-defaults.ts); no monitor. */
export function poolFromConfig(input: PoolInput, accountId: string, now: string): Pool {
  return {
    id: poolIdFor(accountId, input.name),
    account_id: accountId,
    ...poolFieldsFromConfig(input, null),
    created_on: now,
    modified_on: now,
  };
}
