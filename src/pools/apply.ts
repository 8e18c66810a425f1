/**
 * Making the store match the config file's pools (`switchyard config apply`, and `serve` under
 * `pools_from_file: apply`; a reload can call `applyDeclaredPools` again). For each pool of `pools:` in
 * the routing account:
 *   - missing → created with its inline monitor (one transaction);
 *   - different (diff.ts) → updated in one transaction: the file's fields replace the store's, what the
 *     file cannot say is kept; the inline monitor is saved into the pool's monitor when only this pool
 *     uses it, else a new monitor is made for it (another pool's monitor is never changed); no `monitor:`
 *     in the file leaves the pool without one (the old monitor object stays);
 *   - equal → not written at all, so a second apply changes nothing (no new version, no event).
 * Writes go through the API's rules: the same store functions, the per-account limits in the write's
 * transaction (accounts/limits.ts), the monitor reference check, unique names; every write bumps the
 * pool's version, which is how running `serve` processes notice (pools/store-directory.ts polls it).
 * Origins were checked against the outbound policy when the config loaded (config/cross-check.ts).
 *
 * Pruning deletes the routing account's pools that are not to be kept (`prunablePools`: not declared,
 * not the devnet's, not named by a network — the API refuses to delete those too).
 */
import { type AccountLimits, enforceAccountLimits } from '../accounts/limits.js';
import type { Clock } from '../clock.js';
import type { PoolConfig } from '../config/schema.js';
import { createMonitor, poolsUsingMonitor, saveMonitor } from '../health/monitor-queries.js';
import type { Pool, PoolFields } from '../model/pool.js';
import { poolFieldsFromConfig } from '../model/pool-defaults.js';
import type { Db, Store } from '../store/database.js';
import type { StoreSecrets } from '../store/store-secrets.js';
import { inTransaction } from '../store/transaction.js';
import { DECLARED_FIELDS, declaredMonitor } from './declared.js';
import { diffPools, type PoolDifference } from './diff.js';
import { deletePool, type PoolWriteGuard, poolFields, poolNamesOf, updatePool } from './pool-queries.js';
import { createConfigPool } from './seed.js';

export interface ApplyPoolsOptions {
  store: Store;
  /** Opens the stored pools and monitors for the diff, seals what is written. */
  secrets: StoreSecrets;
  clock: Clock;
  /** The routing account (`account_id`). */
  accountId: string;
  pools: readonly PoolConfig[];
  limits: AccountLimits;
}

/** Pool names by what apply did to them. */
export interface ApplyOutcome {
  created: string[];
  updated: string[];
  unchanged: string[];
}

export async function applyDeclaredPools(options: ApplyPoolsOptions): Promise<ApplyOutcome> {
  const outcome: ApplyOutcome = { created: [], updated: [], unchanged: [] };
  const { store, secrets, clock, accountId } = options;
  const differences = await diffPools(store.db, secrets, accountId, options.pools);
  for (const difference of differences) {
    const name = difference.pool.name;
    if (difference.kind === 'same') outcome.unchanged.push(name);
    else if (difference.kind === 'update') {
      await updateDeclaredPool(options, difference);
      outcome.updated.push(name);
    } else if (await createConfigPool(store.db, secrets, clock, accountId, difference.pool, guard(options))) {
      outcome.created.push(name);
    } else {
      // Another process created it from the same file between the diff and the write.
      outcome.unchanged.push(name);
    }
  }
  return outcome;
}

/** The API's per-account limits, checked inside a pool write's transaction. */
function guard(options: ApplyPoolsOptions): PoolWriteGuard {
  return (trx, next, current) =>
    enforceAccountLimits(trx, options.accountId, options.limits, { pool: { id: current?.id, fields: next, current } });
}

async function updateDeclaredPool(
  options: ApplyPoolsOptions,
  difference: Extract<PoolDifference, { kind: 'update' }>,
): Promise<void> {
  const { store, secrets, clock, accountId } = options;
  await inTransaction(store.db, async (trx) => {
    const monitorId = await declaredMonitorId(trx, options, difference);
    const declared = poolFieldsFromConfig(difference.pool, monitorId);
    const updated = await updatePool(
      trx,
      secrets,
      store.dialect,
      clock,
      accountId,
      difference.current.id,
      (fresh) => {
        // The file's fields over the stored pool: what the file cannot say is kept.
        const fields: PoolFields = { ...poolFields(fresh), origins: declared.origins, monitor: monitorId };
        for (const field of DECLARED_FIELDS) Object.assign(fields, { [field]: declared[field] });
        return fields;
      },
      guard(options),
    );
    // Deleted between the diff and the write (the transaction rolls back; nothing is half-applied).
    if (updated === undefined) {
      throw new Error(`pool "${difference.pool.name}" was deleted while the file was being applied; apply again`);
    }
  });
}

/**
 * The monitor the updated pool is to point to: none without `monitor:`; the pool's own monitor, saved
 * with the file's settings, when no other pool uses it; else a new one.
 */
async function declaredMonitorId(
  trx: Db,
  options: ApplyPoolsOptions,
  difference: Extract<PoolDifference, { kind: 'update' }>,
): Promise<string | null> {
  const { secrets, clock, accountId, limits } = options;
  const settings = declaredMonitor(difference.pool);
  if (settings === undefined) return null;
  const current = difference.monitor;
  if (current !== undefined) {
    const users = await poolsUsingMonitor(trx, accountId, current.id);
    if (users.every((user) => user.id === difference.current.id)) {
      const changed = difference.changes.some((change) => /^monitor(\.|$)/.test(change.field));
      if (changed) {
        await enforceAccountLimits(trx, accountId, limits, { monitor: { id: current.id, settings } });
        await saveMonitor(trx, secrets, clock, accountId, current.id, settings);
      }
      return current.id;
    }
  }
  return (await createMonitor(trx, secrets, clock, accountId, settings)).id;
}

/** The account's pools whose names are not in `keep`, by name. */
export async function prunablePools(
  db: Db,
  accountId: string,
  keep: ReadonlySet<string>,
): Promise<{ id: string; name: string }[]> {
  return (await poolNamesOf(db, accountId)).filter((pool) => !keep.has(pool.name));
}

/** Deletes these pools of the account (one transaction each); returns the names of those deleted. */
export async function prunePools(
  store: Store,
  accountId: string,
  pools: readonly Pick<Pool, 'id' | 'name'>[],
): Promise<string[]> {
  const deleted: string[] = [];
  for (const pool of pools) if (await deletePool(store.db, accountId, pool.id)) deleted.push(pool.name);
  return deleted;
}
