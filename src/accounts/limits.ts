/**
 * Per-account limits on what a tenant may configure (SPEC §8 "Probe budget"), checked by the API's pools
 * and monitors routes and by `config apply` (pools/apply.ts) inside the same store transaction as the write, after `lockAccount` (store/
 * account-usage.ts), so two parallel writes cannot both slip under a limit. A refusal is 400 / 1002.
 *
 * - `limits.max_pools_per_account` (default 1000): creating a pool beyond it is refused.
 * - `limits.max_origins_per_pool` (default 64): a pool write with more origins is refused (the API's
 *   schema caps a pool at 100 origins whatever the limit says).
 * - `limits.probes_per_second` (default 50): the account's probe rate, Σ over its pools of
 *   origins × (retries + 1) ÷ interval (model/probe-rate.ts says exactly what counts), may not exceed
 *   it. Checked on a pool create/update/patch and on a monitor put/patch that changes `interval` or
 *   `retries` (only pools using the monitor change). Early confirmation probes after a live-traffic
 *   ejection (health/confirmation.ts) are not counted.
 *
 * Only a change that makes things worse is refused: an account already over a limit (the operator
 * lowered it) can still rename a pool, lower an interval's cost or remove origins. Pools declared in the
 * config file are checked when the config loads (config/cross-check.ts) and are seeded without these
 * checks; `config apply` and `pools_from_file: apply` write them with these checks.
 */

import type { Kysely } from 'kysely';
import { SwitchyardError } from '../errors/base.js';
import type { MonitorSettings } from '../model/monitor-schema.js';
import type { Pool, PoolFields } from '../model/pool.js';
import { poolProbeRate, RATE_EPSILON, shownRate } from '../model/probe-rate.js';
import type { Database } from '../store/schema.js';
import { accountUsage, lockAccount, type MonitorUsage, type PoolUsage } from './account-usage.js';

/** `limits.*` of the config (config/schema.ts); the config check applies the same rules to `pools:`. */
export interface AccountLimits {
  probes_per_second: number;
  max_pools_per_account: number;
  max_origins_per_pool: number;
}

/** What a pool contributes to the probe budget. */
function usageOf(fields: Pick<PoolFields, 'enabled' | 'monitor' | 'origins'>): Omit<PoolUsage, 'id'> {
  return {
    enabled: fields.enabled,
    monitor: fields.monitor,
    enabledOrigins: fields.origins.filter((origin) => origin.enabled).length,
  };
}

function accountRate(pools: readonly Omit<PoolUsage, 'id'>[], monitors: ReadonlyMap<string, MonitorUsage>): number {
  let sum = 0;
  for (const pool of pools) {
    const monitor = pool.monitor === null ? undefined : monitors.get(pool.monitor);
    sum += poolProbeRate({ ...pool, monitored: pool.monitor !== null }, monitor);
  }
  return sum;
}

export interface ProposedChange {
  /** The pool being created (`id` undefined) or updated, with its new fields. */
  pool?: { id: string | undefined; fields: PoolFields; current?: Pool | undefined };
  /** A monitor's new probe settings. */
  monitor?: { id: string; settings: Pick<MonitorSettings, 'interval' | 'retries'> };
}

/**
 * Throws 400 / 1002 when `change` would take the account over a limit. Runs inside the write's
 * transaction (`trx`) and locks the account first (see header).
 */
export async function enforceAccountLimits(
  trx: Kysely<Database>,
  accountId: string,
  limits: AccountLimits,
  change: ProposedChange,
): Promise<void> {
  const { pool } = change;
  if (pool !== undefined) {
    const count = pool.fields.origins.length;
    const before = pool.current?.origins.length ?? 0;
    if (count > limits.max_origins_per_pool && count > before) {
      throw new SwitchyardError(
        'API_VALIDATION',
        `origins: a pool may have at most ${limits.max_origins_per_pool} origins (limits.max_origins_per_pool); this one would have ${count}`,
        { details: { pointer: '/origins' } },
      );
    }
  }
  await lockAccount(trx, accountId);
  const usage = await accountUsage(trx, accountId);
  if (pool !== undefined && pool.id === undefined && usage.pools.length >= limits.max_pools_per_account) {
    throw new SwitchyardError(
      'API_VALIDATION',
      `account ${accountId} already has ${usage.pools.length} pools, the most limits.max_pools_per_account (${limits.max_pools_per_account}) allows; delete one first`,
    );
  }
  const before = accountRate(usage.pools, usage.monitors);
  const monitors = new Map(usage.monitors);
  if (change.monitor !== undefined) {
    monitors.set(change.monitor.id, { id: change.monitor.id, ...change.monitor.settings });
  }
  const pools: Omit<PoolUsage, 'id'>[] = usage.pools.filter((entry) => pool === undefined || entry.id !== pool.id);
  if (pool !== undefined) pools.push(usageOf(pool.fields));
  const after = accountRate(pools, monitors);
  if (after > limits.probes_per_second + RATE_EPSILON && after > before + RATE_EPSILON) {
    throw new SwitchyardError(
      'API_VALIDATION',
      `this change would make account ${accountId} probe ${shownRate(after)} requests/s, over ` +
        `limits.probes_per_second ${shownRate(limits.probes_per_second)} by ${shownRate(after - limits.probes_per_second)} ` +
        '(Σ over enabled monitored pools of enabled origins × (retries + 1) ÷ interval); raise the interval, ' +
        'lower retries or use fewer origins',
    );
  }
}
