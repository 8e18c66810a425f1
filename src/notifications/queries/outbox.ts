/**
 * Queries behind durable notification delivery: the dispatcher cursor over `health_events.seq`, alert
 * correlations, the delivery outbox (claim with a lease, mark sent / retry / final), history and the
 * deprecation-notice bookkeeping (history reads are in queries/history.ts, the pools' legacy
 * `notification_email` in legacy-email.ts). Rules the queries enforce:
 *
 * - A delivery is inserted with `ON CONFLICT (dedupe_key) DO NOTHING`: repeating a pass never duplicates.
 * - The cursor only moves by compare-and-set (`WHERE seq = <old>`), inside the transaction that inserts
 *   the deliveries of the events it passes; a concurrent dispatcher's transaction then changes nothing.
 * - A claim sets `locked_until`/`locked_by` on due pending rows; PostgreSQL selects them `FOR UPDATE SKIP
 *   LOCKED`, so several processes never claim one row at once. Every later write checks `locked_by`.
 */
import type { Db, Dialect } from '../../store/database.js';
import type {
  DeliveryKind,
  DeliveryStatus,
  MechanismType,
  NotificationDeliveriesTable,
  NotificationHistoryTable,
} from '../../store/tables/notifications.js';

const CURSOR = 'dispatcher';

/** The JSON in `notification_deliveries.payload`: everything needed to send and to record history. */
export interface DeliveryPayload {
  name: string;
  description: string;
  alert_type: string;
  /** Email body, or the webhook's one-line `text`. */
  text: string;
  subject?: string;
  /** Webhook only: the exact JSON text POSTed on every attempt (signatures cover these bytes). */
  body?: string;
}

export interface NewDelivery {
  id: string;
  account_id: string;
  kind: DeliveryKind;
  dedupe_key: string;
  event_id: string | null;
  policy_id: string | null;
  mechanism_type: MechanismType;
  mechanism: string;
  message_id: string;
  payload: DeliveryPayload;
  created_at: string;
}

export type DeliveryRow = NotificationDeliveriesTable;

// ── Cursor and events ──────────────────────────────────────────────────────────────────────────

export async function readCursor(db: Db): Promise<number> {
  await db
    .insertInto('notification_cursor')
    .values({ name: CURSOR, seq: 0 })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('notification_cursor').select('seq').where('name', '=', CURSOR).executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/** Compare-and-set; false when another dispatcher moved the cursor first. */
export async function advanceCursor(db: Db, from: number, to: number): Promise<boolean> {
  const result = await db
    .updateTable('notification_cursor')
    .set({ seq: to })
    .where('name', '=', CURSOR)
    .where('seq', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// ── Correlations ───────────────────────────────────────────────────────────────────────────────

/** The open correlation of an object, opening one with `candidate` when there is none. */
export async function openCorrelation(
  db: Db,
  accountId: string,
  objectKey: string,
  candidate: string,
  now: string,
): Promise<string> {
  await db
    .insertInto('alert_correlations')
    .values({ account_id: accountId, object_key: objectKey, correlation_id: candidate, opened_at: now })
    .onConflict((oc) => oc.columns(['account_id', 'object_key']).doNothing())
    .execute();
  const row = await db
    .selectFrom('alert_correlations')
    .select('correlation_id')
    .where('account_id', '=', accountId)
    .where('object_key', '=', objectKey)
    .executeTakeFirstOrThrow();
  return row.correlation_id;
}

/** Closes the object's open correlation and returns its id, if one was open. */
export async function closeCorrelation(db: Db, accountId: string, objectKey: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('alert_correlations')
    .select('correlation_id')
    .where('account_id', '=', accountId)
    .where('object_key', '=', objectKey)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  await db
    .deleteFrom('alert_correlations')
    .where('account_id', '=', accountId)
    .where('object_key', '=', objectKey)
    .execute();
  return row.correlation_id;
}

// ── Deliveries ─────────────────────────────────────────────────────────────────────────────────

/** Inserts deliveries as pending and due at once; duplicates (same dedupe_key) are ignored. */
export async function insertDeliveries(db: Db, deliveries: readonly NewDelivery[]): Promise<void> {
  for (const d of deliveries) {
    await db
      .insertInto('notification_deliveries')
      .values({
        id: d.id,
        account_id: d.account_id,
        kind: d.kind,
        dedupe_key: d.dedupe_key,
        event_id: d.event_id,
        policy_id: d.policy_id,
        mechanism_type: d.mechanism_type,
        mechanism: d.mechanism,
        message_id: d.message_id,
        status: 'pending',
        attempts: 0,
        next_attempt_at: d.created_at,
        locked_until: null,
        locked_by: null,
        last_error: null,
        payload: JSON.stringify(d.payload),
        created_at: d.created_at,
        sent_at: null,
      })
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .execute();
  }
}

/**
 * Claims up to `limit` due pending deliveries for `owner` until `leaseUntil`. A row is due when its
 * `next_attempt_at` has passed and nobody holds an unexpired lease on it.
 */
export async function claimDueDeliveries(
  db: Db,
  dialect: Dialect,
  owner: string,
  now: string,
  leaseUntil: string,
  limit: number,
): Promise<DeliveryRow[]> {
  return (
    db
      .updateTable('notification_deliveries')
      .set({ locked_by: owner, locked_until: leaseUntil })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('notification_deliveries')
          .select('id')
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', now)
          .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<', now)]))
          .orderBy('next_attempt_at')
          .orderBy('id')
          .limit(limit)
          .$if(dialect === 'postgres', (qb) => qb.forUpdate().skipLocked()),
      )
      // Re-checked by PostgreSQL after any row-lock wait, so two claims can never both win a row.
      .where('status', '=', 'pending')
      .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<', now)]))
      .returningAll()
      .execute()
  );
}

/**
 * Applies `changes` to a claimed pending row and drops the lease, only while `owner` still holds it: a
 * process whose lease expired (and was re-claimed elsewhere) changes nothing. True when the row changed.
 */
async function settleLeased(
  db: Db,
  row: DeliveryRow,
  owner: string,
  changes: Partial<Omit<DeliveryRow, 'id' | 'locked_by' | 'locked_until'>>,
): Promise<boolean> {
  const result = await db
    .updateTable('notification_deliveries')
    .set({ ...changes, locked_by: null, locked_until: null })
    .where('id', '=', row.id)
    .where('locked_by', '=', owner)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Marks a claimed delivery sent and records it in history, atomically. False if the lease was lost. */
export async function markDeliverySent(
  db: Db,
  row: DeliveryRow,
  owner: string,
  now: string,
  history: Omit<NotificationHistoryTable, 'sent'>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const updated = await settleLeased(trx, row, owner, { status: 'sent', sent_at: now, attempts: row.attempts + 1 });
    if (!updated) return false;
    await trx
      .insertInto('notification_history')
      .values({ ...history, sent: now })
      .execute();
    return true;
  });
}

/** Records a failed attempt and when to try again. */
export async function scheduleRetry(
  db: Db,
  row: DeliveryRow,
  owner: string,
  nextAttemptAt: string,
  error: string,
): Promise<void> {
  await settleLeased(db, row, owner, { attempts: row.attempts + 1, next_attempt_at: nextAttemptAt, last_error: error });
}

/** Ends a delivery without sending it: `dead` (retry window over) or `cancelled` (no longer deliverable). */
export async function finishDelivery(
  db: Db,
  row: DeliveryRow,
  owner: string,
  status: Extract<DeliveryStatus, 'dead' | 'cancelled'>,
  error: string,
  attempted: boolean,
): Promise<void> {
  await settleLeased(db, row, owner, {
    status,
    attempts: attempted ? row.attempts + 1 : row.attempts,
    last_error: error,
  });
}

/**
 * Drops every lease. Only for the embedded SQLite store at start-up, where a single `serve` process owns
 * the file: a lease left by a killed process would otherwise delay its deliveries until it expires.
 */
export async function releaseAllLeases(db: Db): Promise<void> {
  await db
    .updateTable('notification_deliveries')
    .set({ locked_by: null, locked_until: null })
    .where('status', '=', 'pending')
    .where('locked_by', 'is not', null)
    .execute();
}

export async function listDeliveries(db: Db, accountId?: string): Promise<DeliveryRow[]> {
  return db
    .selectFrom('notification_deliveries')
    .selectAll()
    .$if(accountId !== undefined, (qb) => qb.where('account_id', '=', accountId as string))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

// ── Deprecation notices ────────────────────────────────────────────────────────────────────────

/**
 * Takes the right to queue a deprecation notice for (account, address) now: true when the address never
 * got one or its last one was queued at or before `cutoff`. Atomic, so concurrent processes queue one.
 */
export async function takeDeprecationSlot(
  db: Db,
  accountId: string,
  address: string,
  now: string,
  cutoff: string,
): Promise<boolean> {
  const inserted = await db
    .insertInto('deprecation_notices')
    .values({ account_id: accountId, address, last_sent_at: now })
    .onConflict((oc) => oc.columns(['account_id', 'address']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return true;
  const updated = await db
    .updateTable('deprecation_notices')
    .set({ last_sent_at: now })
    .where('account_id', '=', accountId)
    .where('address', '=', address)
    .where('last_sent_at', '<=', cutoff)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}
