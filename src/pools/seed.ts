/**
 * Start-up seeding of the store from the config (SPEC §1):
 *   - `account_id` is created when missing;
 *   - each pool under `pools:` is created in that account when no pool of that name exists, and is
 *     never overwritten afterwards (API changes survive restarts);
 *   - a pool's inline `monitor:` becomes a monitor object the new pool points to (created in the same
 *     transaction, so a crash leaves no orphan).
 * Exception: pools listed in `refreshOrigins` (the generated devnet pool, whose nodes may get new ports
 * on each start) get their origins' addresses updated to the current ones; nothing else of them changes.
 * Safe when several processes start at once against one PostgreSQL: a lost race is a no-op.
 */
import type { Kysely } from 'kysely';
import { ensureAccount } from '../accounts/accounts.js';
import type { Clock } from '../clock.js';
import type { PoolConfig } from '../config/schema.js';
import { isSwitchyardError } from '../errors/base.js';
import { createMonitor } from '../health/monitor-queries.js';
import type { Logger } from '../log.js';
import { poolFieldsFromConfig } from '../model/pool-defaults.js';
import type { Store } from '../store/database.js';
import type { Database } from '../store/schema.js';
import type { StoreSecrets } from '../store/store-secrets.js';
import { inTransaction } from '../store/transaction.js';
import { declaredMonitor } from './declared.js';
import { createPool, findPoolByName, type PoolWriteGuard, poolFields, updatePool } from './pool-queries.js';

export interface SeedOptions {
  store: Store;
  /** Seals the origins' and monitors' secrets. */
  secrets: StoreSecrets;
  clock: Clock;
  logger: Logger;
  accountId: string;
  pools: readonly PoolConfig[];
  /** Names of pools whose origin addresses follow the config on every start (the devnet pool). */
  refreshOrigins?: readonly string[];
}

export async function seedFromConfig(options: SeedOptions): Promise<void> {
  const { store, secrets, clock, logger, accountId } = options;
  await ensureAccount(store.db, clock, accountId, 'default');
  for (const pool of options.pools) {
    const existing = await findPoolByName(store.db, secrets, accountId, pool.name);
    if (existing === undefined) {
      const created = await createConfigPool(store.db, secrets, clock, accountId, pool);
      if (created) logger.info('created pool from config', { pool: pool.name, account_id: accountId });
      continue;
    }
    if (!(options.refreshOrigins ?? []).includes(pool.name)) continue;
    const addresses = new Map(pool.origins.map((origin) => [origin.name, origin.address]));
    if (existing.origins.every((origin) => (addresses.get(origin.name) ?? origin.address) === origin.address)) continue;
    await updatePool(store.db, secrets, store.dialect, clock, accountId, existing.id, (current) => {
      const origins = current.origins.map((origin) => ({
        ...origin,
        address: addresses.get(origin.name) ?? origin.address,
      }));
      return { ...poolFields(current), origins };
    });
    logger.info('updated origin addresses of a generated pool', { pool: pool.name });
  }
}

/**
 * Creates a declared pool and its inline monitor in one transaction (`guard`: the API's limits, for
 * `config apply`). True when created; false when another process created a pool of that name first.
 */
export async function createConfigPool(
  db: Kysely<Database>,
  secrets: StoreSecrets,
  clock: Clock,
  accountId: string,
  pool: PoolConfig,
  guard?: PoolWriteGuard,
): Promise<boolean> {
  try {
    await inTransaction(db, async (trx) => {
      const settings = declaredMonitor(pool);
      const monitorId =
        settings === undefined ? null : (await createMonitor(trx, secrets, clock, accountId, settings)).id;
      await createPool(trx, secrets, clock, accountId, poolFieldsFromConfig(pool, monitorId), guard);
    });
    return true;
  } catch (err) {
    if (isSwitchyardError(err) && err.code === 'API_NOT_UNIQUE') return false;
    throw err;
  }
}
