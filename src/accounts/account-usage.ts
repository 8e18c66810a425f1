/**
 * What an account has, for the per-account limits (accounts/limits.ts): its pools (enabled, monitor, number of
 * enabled origins) and its monitors' probe settings (interval, retries), read inside the caller's
 * transaction after `lockAccount`.
 *
 * `lockAccount` serialises the limit checks of one account: it writes the account's own row (`UPDATE
 * accounts SET name = name`, the same SQL on both backends). On PostgreSQL that takes the row lock, so a
 * second transaction checking the same account waits until the first commits and then reads its rows
 * (READ COMMITTED: each statement sees what was committed before it); on SQLite it makes the transaction
 * a writer at once, and SQLite has one writer at a time. So two parallel creates cannot both pass a limit
 * that only one of them fits under. Lock order, to stay free of deadlocks: a pool row (updatePool's
 * `FOR UPDATE`) before the account row, never the other way round.
 *
 * Rows are decoded leniently: a pool or monitor whose settings cannot be read counts as probing nothing
 * (the health engine skips it too), so one corrupt row never blocks an account's writes.
 */
import type { Kysely } from 'kysely';
import { MONITOR_DEFAULTS } from '../model/monitor-schema.js';
import type { Database } from '../store/schema.js';

export interface PoolUsage {
  id: string;
  enabled: boolean;
  monitor: string | null;
  /** Origins with `enabled` true (absent counts as true, as when the row is decoded). */
  enabledOrigins: number;
}

export interface MonitorUsage {
  id: string;
  interval: number;
  retries: number;
}

export async function lockAccount(trx: Kysely<Database>, accountId: string): Promise<void> {
  await trx
    .updateTable('accounts')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', accountId)
    .execute();
}

export async function accountUsage(
  trx: Kysely<Database>,
  accountId: string,
): Promise<{ pools: PoolUsage[]; monitors: Map<string, MonitorUsage> }> {
  const poolRows = await trx
    .selectFrom('pools')
    .select(['id', 'enabled', 'monitor_id', 'settings'])
    .where('account_id', '=', accountId)
    .execute();
  const monitorRows = await trx
    .selectFrom('monitors')
    .select(['id', 'settings'])
    .where('account_id', '=', accountId)
    .execute();
  const pools = poolRows.map((row) => ({
    id: row.id,
    enabled: Boolean(row.enabled),
    monitor: row.monitor_id,
    enabledOrigins: countEnabledOrigins(row.settings),
  }));
  const monitors = new Map<string, MonitorUsage>();
  for (const row of monitorRows) {
    const settings = parseObject(row.settings);
    const interval = settings?.interval;
    const retries = settings?.retries;
    // Missing fields take the monitor defaults, as withMonitorDefaults fills them when the row is read.
    monitors.set(row.id, {
      id: row.id,
      interval: typeof interval === 'number' && interval > 0 ? interval : MONITOR_DEFAULTS.interval,
      retries: typeof retries === 'number' && retries >= 0 ? retries : MONITOR_DEFAULTS.retries,
    });
  }
  return { pools, monitors };
}

function countEnabledOrigins(settings: string): number {
  const origins = parseObject(settings)?.origins;
  if (!Array.isArray(origins)) return 0;
  return origins.filter((origin) => (origin as { enabled?: unknown } | null)?.enabled !== false).length;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
