/**
 * Reads of the pools' legacy per-pool `notification_email` (deprecated) and `notification_filter`, for
 * the dispatcher (legacy alert emails), the deprecation notices and the migration status route. Stateless
 * queries; a pool whose stored settings cannot be decoded counts as having no filter (see legacyFilter).
 */
import type { NotificationFilter } from '../model/pool-schema.js';
import type { Db } from '../store/database.js';

export interface LegacyEmailPool {
  id: string;
  account_id: string;
  name: string;
  notification_email: string;
  notification_filter: NotificationFilter | null;
}

function toLegacyPool(row: {
  id: string;
  account_id: string;
  name: string;
  notification_email: string;
  settings: string;
}): LegacyEmailPool {
  return {
    id: row.id,
    account_id: row.account_id,
    name: row.name,
    notification_email: row.notification_email,
    notification_filter: legacyFilter(row.settings),
  };
}

/**
 * The pool's `notification_filter`. Settings that cannot be read (a hand-edited row, see pools/pool-queries.ts)
 * count as no filter: the legacy address then gets every alert, rather than none and no deprecation notice.
 */
function legacyFilter(settings: string): NotificationFilter | null {
  try {
    const parsed = JSON.parse(settings) as { notification_filter?: NotificationFilter | null } | null;
    return parsed?.notification_filter ?? null;
  } catch {
    return null;
  }
}

export async function poolLegacySettings(db: Db, poolId: string): Promise<LegacyEmailPool | undefined> {
  const row = await db
    .selectFrom('pools')
    .select(['id', 'account_id', 'name', 'notification_email', 'settings'])
    .where('id', '=', poolId)
    .executeTakeFirst();
  return row === undefined ? undefined : toLegacyPool(row);
}

/** Pools with a non-empty `notification_email`, of one account or of all, ordered like the pool list. */
export async function poolsWithLegacyEmail(db: Db, accountId?: string): Promise<LegacyEmailPool[]> {
  const rows = await db
    .selectFrom('pools')
    .select(['id', 'account_id', 'name', 'notification_email', 'settings'])
    .where('notification_email', '!=', '')
    .$if(accountId !== undefined, (qb) => qb.where('account_id', '=', accountId as string))
    .orderBy('account_id')
    .orderBy('name')
    .orderBy('id')
    .execute();
  return rows.map(toLegacyPool);
}
