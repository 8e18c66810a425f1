/**
 * Queries of the notification history (`/alerting/v3/history`): every delivery that was sent, written
 * by `markDeliverySent` in the same transaction that marks it sent. Scoped by account; ordered newest
 * first; `since` inclusive and `before` exclusive on `sent` (RFC 3339 text, so string order is time order).
 */

import type { Db } from '../../store/database.js';
import type { NotificationHistoryTable } from '../../store/tables/notifications.js';

export interface HistoryRange {
  since?: string | undefined;
  before?: string | undefined;
}

export async function countHistory(db: Db, accountId: string, range: HistoryRange): Promise<number> {
  const row = await db
    .selectFrom('notification_history')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .$if(range.since !== undefined, (qb) => qb.where('sent', '>=', range.since as string))
    .$if(range.before !== undefined, (qb) => qb.where('sent', '<', range.before as string))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Newest first, ties by id. */
export async function listHistory(
  db: Db,
  accountId: string,
  range: HistoryRange,
  limit: number,
  offset: number,
): Promise<NotificationHistoryTable[]> {
  return db
    .selectFrom('notification_history')
    .selectAll()
    .where('account_id', '=', accountId)
    .$if(range.since !== undefined, (qb) => qb.where('sent', '>=', range.since as string))
    .$if(range.before !== undefined, (qb) => qb.where('sent', '<', range.before as string))
    .orderBy('sent', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}
