/**
 * The delivery queue as the API shows it (api/routes/deliveries.ts): deliveries not yet sent — pending
 * (never tried), failing (pending after at least one failed attempt: `last_error`, `next_attempt_at`) and
 * dead-lettered — newest first, and the operator's retry of a dead-lettered one. A retry makes it pending
 * and due now; its retry window (counted from `created_at`) is over, so a failing retry is dead-lettered
 * again at once by the sender: one more attempt, never a new schedule.
 */
import type { Db } from '../../store/database.js';
import type { NotificationDeliveriesTable } from '../../store/tables/notifications.js';

export type QueueState = 'pending' | 'failing' | 'dead';
export const QUEUE_STATES: readonly QueueState[] = ['pending', 'failing', 'dead'];

function queued(db: Db, accountId: string, states: readonly QueueState[]) {
  return db
    .selectFrom('notification_deliveries')
    .where('account_id', '=', accountId)
    .where((eb) =>
      eb.or(
        states.map((state) =>
          state === 'dead'
            ? eb('status', '=', 'dead')
            : eb.and([eb('status', '=', 'pending'), eb('attempts', state === 'pending' ? '=' : '>', 0)]),
        ),
      ),
    );
}

export async function listQueue(
  db: Db,
  accountId: string,
  states: readonly QueueState[],
  limit: number,
  offset: number,
): Promise<NotificationDeliveriesTable[]> {
  return queued(db, accountId, states)
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countQueue(db: Db, accountId: string, states: readonly QueueState[]): Promise<number> {
  const row = await queued(db, accountId, states)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findDelivery(
  db: Db,
  accountId: string,
  id: string,
): Promise<NotificationDeliveriesTable | undefined> {
  return db
    .selectFrom('notification_deliveries')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Makes a dead-lettered delivery pending and due at `now`; false when it was not dead (any more). */
export async function retryDead(db: Db, accountId: string, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('notification_deliveries')
    .set({ status: 'pending', next_attempt_at: now, locked_by: null, locked_until: null })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('status', '=', 'dead')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export function queueState(
  row: Pick<NotificationDeliveriesTable, 'status' | 'attempts'>,
): QueueState | 'sent' | 'cancelled' {
  if (row.status === 'pending') return row.attempts > 0 ? 'failing' : 'pending';
  return row.status;
}
