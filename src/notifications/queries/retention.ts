/**
 * Bounded retention of what notifications and health leave behind (config `notification_retention`,
 * default 30 days; 0 keeps everything). Rows older than the cutoff are deleted in batches of BATCH, so
 * no single statement holds locks for long:
 * - `notification_history` by `sent`;
 * - `notification_deliveries` that are finished (`sent`, `dead`, `cancelled`) by `created_at` — a
 *   `pending` delivery is never deleted, whatever its age;
 * - `health_events` by `occurred_at`, only at or below the dispatcher's cursor (already turned into
 *   deliveries), so an event is never deleted before it was dispatched.
 * - `chain_incidents` that are closed and fully dispatched, by `closed_at` (open incidents are kept).
 * Open alert correlations and deprecation-notice bookkeeping are kept (one small row per object/address).
 * Several processes may prune at once: deletes of already-deleted rows change nothing.
 */

import { pruneDispatchedEvents } from '../../health/events.js';
import { pruneIncidents } from '../../incidents/queries.js';
import type { Db } from '../../store/database.js';
import { readCursor } from './outbox.js';

const BATCH = 1000;

export interface Pruned {
  history: number;
  deliveries: number;
  events: number;
}

export async function pruneNotificationData(db: Db, cutoff: string): Promise<Pruned> {
  const history = await repeat(async () => {
    const ids = await db
      .selectFrom('notification_history')
      .select('id')
      .where('sent', '<', cutoff)
      .limit(BATCH)
      .execute();
    if (ids.length === 0) return 0;
    const result = await db
      .deleteFrom('notification_history')
      .where(
        'id',
        'in',
        ids.map((row) => row.id),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  });
  const deliveries = await repeat(async () => {
    const ids = await db
      .selectFrom('notification_deliveries')
      .select('id')
      .where('status', 'in', ['sent', 'dead', 'cancelled'])
      .where('created_at', '<', cutoff)
      .limit(BATCH)
      .execute();
    if (ids.length === 0) return 0;
    const result = await db
      .deleteFrom('notification_deliveries')
      .where(
        'id',
        'in',
        ids.map((row) => row.id),
      )
      .where('status', '!=', 'pending')
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  });
  const cursor = await readCursor(db);
  const events = (await pruneDispatchedEvents(db, cursor, cutoff, BATCH)) + (await pruneIncidents(db, cutoff));
  return { history, deliveries, events };
}

/** Runs a batch until it deletes nothing; returns the total. */
async function repeat(batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await batch();
    total += deleted;
    if (deleted === 0) return total;
  }
}
