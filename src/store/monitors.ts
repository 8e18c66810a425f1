/**
 * Monitors in the store: one row per monitor, every field (defaults filled in) as JSON `settings`.
 * Lists are ordered by (created_on, id) so pages are stable. A monitor used by a pool cannot be
 * deleted: the delete runs in a transaction that first looks for pools naming it (pools.monitor_id
 * is also a foreign key, so a racing writer cannot slip past).
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import { type MonitorSettings, withMonitorDefaults } from '../health/monitor-schema.js';
import { newId, timestamp } from './ids.js';
import type { Database } from './schema.js';
import type { MonitorsTable } from './tables/core.js';
import { inTransaction } from './transaction.js';

export interface Monitor extends MonitorSettings {
  id: string;
  account_id: string;
  created_on: string;
  modified_on: string;
}

export interface PageWindow {
  offset: number;
  limit: number;
}

function toMonitor(row: MonitorsTable): Monitor {
  const settings = withMonitorDefaults(JSON.parse(row.settings) as Partial<MonitorSettings>);
  return {
    ...settings,
    id: row.id,
    account_id: row.account_id,
    created_on: row.created_on,
    modified_on: row.modified_on,
  };
}

export async function getMonitor(db: Kysely<Database>, accountId: string, id: string): Promise<Monitor | undefined> {
  const row = await db
    .selectFrom('monitors')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : toMonitor(row);
}

/** Any account's monitor by id: for the health engine, which follows a pool's `monitor` field. */
export async function findMonitorById(db: Kysely<Database>, id: string): Promise<Monitor | undefined> {
  const row = await db.selectFrom('monitors').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toMonitor(row);
}

/** Every monitor of every account (the health engine loads them with the pools). */
export async function listAllMonitors(db: Kysely<Database>): Promise<Monitor[]> {
  const rows = await db.selectFrom('monitors').selectAll().orderBy('created_on').orderBy('id').execute();
  return rows.map(toMonitor);
}

export async function listMonitors(
  db: Kysely<Database>,
  accountId: string,
  window: PageWindow,
): Promise<{ monitors: Monitor[]; total: number }> {
  const rows = await db
    .selectFrom('monitors')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_on')
    .orderBy('id')
    .limit(window.limit)
    .offset(window.offset)
    .execute();
  const count = await db
    .selectFrom('monitors')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { monitors: rows.map(toMonitor), total: Number(count.n) };
}

export async function createMonitor(
  db: Kysely<Database>,
  clock: Clock,
  accountId: string,
  settings: MonitorSettings,
): Promise<Monitor> {
  const now = timestamp(clock);
  const row: MonitorsTable = {
    id: newId(),
    account_id: accountId,
    settings: JSON.stringify(settings),
    created_on: now,
    modified_on: now,
  };
  await db.insertInto('monitors').values(row).execute();
  return toMonitor(row);
}

/** Replaces every setting; undefined when the monitor does not exist in this account. */
export async function saveMonitor(
  db: Kysely<Database>,
  clock: Clock,
  accountId: string,
  id: string,
  settings: MonitorSettings,
): Promise<Monitor | undefined> {
  const result = await db
    .updateTable('monitors')
    .set({ settings: JSON.stringify(settings), modified_on: timestamp(clock) })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return undefined;
  return getMonitor(db, accountId, id);
}

/** Pools (id, name) of the account that use this monitor, by name. */
export async function poolsUsingMonitor(
  db: Kysely<Database>,
  accountId: string,
  monitorId: string,
): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('pools')
    .select(['id', 'name'])
    .where('account_id', '=', accountId)
    .where('monitor_id', '=', monitorId)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

/**
 * Deletes the monitor unless a pool uses it (then 400 naming the pools). Returns false when it does
 * not exist in this account.
 */
export async function deleteMonitor(db: Kysely<Database>, accountId: string, id: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const users = await poolsUsingMonitor(trx, accountId, id);
    if (users.length > 0) {
      const names = users.map((pool) => `"${pool.name}"`).join(', ');
      throw new SwitchyardError(
        'API_IN_USE',
        `monitor ${id} is used by pool ${names}; remove it from ${users.length > 1 ? 'those pools' : 'that pool'} first`,
        { details: { pools: users } },
      );
    }
    const result = await trx
      .deleteFrom('monitors')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}
