/**
 * The ledger's events as the notification dispatcher takes them (SPEC §19: one alert per state change),
 * and the ledger's retention. The dispatcher claims an event by flipping `dispatched` 0 → 1 in the
 * transaction that writes its deliveries: with several processes only one claims it.
 */
import type { Db } from '../store/database.js';
import type { LedgerEventStatus, TransactionAlertData } from './types.js';

export interface LedgerEvent {
  seq: number;
  id: string;
  accountId: string;
  status: LedgerEventStatus;
  data: TransactionAlertData;
  at: string;
}

/** Events not yet dispatched, oldest first. */
export async function undispatchedEvents(db: Db, limit: number): Promise<LedgerEvent[]> {
  const rows = await db
    .selectFrom('ledger_events')
    .selectAll()
    .where('dispatched', '=', 0)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    seq: Number(row.seq),
    id: row.id,
    accountId: row.account_id,
    status: row.status,
    data: JSON.parse(row.data) as TransactionAlertData,
    at: row.at,
  }));
}

/** Claims an event for dispatch; false when another dispatcher took it. */
export async function claimEvent(db: Db, id: string): Promise<boolean> {
  const result = await db
    .updateTable('ledger_events')
    .set({ dispatched: 1 })
    .where('id', '=', id)
    .where('dispatched', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The networks that have records (retention also covers networks no longer configured). */
export async function recordedNetworks(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('ledger_transactions').select('network').distinct().execute();
  return rows.map((row) => row.network);
}

/**
 * Retention of one network's records: raw bytes of records first seen before `rawCutoff` are cleared;
 * records unchanged since `cutoff` are deleted (none with `cutoff` undefined). Returns how many went.
 */
export async function pruneRecords(
  db: Db,
  network: string,
  cutoff: string | undefined,
  rawCutoff: string,
): Promise<number> {
  await db
    .updateTable('ledger_transactions')
    .set({ raw: null })
    .where('network', '=', network)
    .where('raw', 'is not', null)
    .where('first_seen', '<', rawCutoff)
    .execute();
  if (cutoff === undefined) return 0;
  const result = await db
    .deleteFrom('ledger_transactions')
    .where('network', '=', network)
    .where('updated_at', '<', cutoff)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes dispatched events whose record is gone; returns how many went. */
export async function pruneOrphanEvents(db: Db): Promise<number> {
  const result = await db
    .deleteFrom('ledger_events')
    .where('dispatched', '=', 1)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('ledger_transactions')
            .select('ledger_transactions.hash')
            .whereRef('ledger_transactions.network', '=', 'ledger_events.network')
            .whereRef('ledger_transactions.hash', '=', 'ledger_events.hash'),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
