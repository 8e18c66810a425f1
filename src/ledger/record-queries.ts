/**
 * Reading the ledger for the API (SPEC §19) and the metrics. Every listing is scoped by account: only the
 * records sent while that account was the routing account. Order: newest first (`first_seen`
 * descending, then network and hash), stable across pages.
 */
import type { Db } from '../store/database.js';
import type { LedgerEventsTable, LedgerTransactionsTable } from '../store/tables/ledger.js';
import type { StatusCount } from './metrics.js';
import type { HistoryEntry, LedgerStatus, TransactionAlertData, TransactionRecord } from './types.js';

export interface RecordFilter {
  network?: string;
  status?: LedgerStatus;
  keyId?: string;
  from?: string;
  /** RFC 3339: first seen at or after it. */
  since?: string;
}

function filtered(db: Db, accountId: string, filter: RecordFilter) {
  let query = db.selectFrom('ledger_transactions').where('account_id', '=', accountId);
  if (filter.network !== undefined) query = query.where('network', '=', filter.network);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.keyId !== undefined) query = query.where('key_id', '=', filter.keyId);
  if (filter.from !== undefined) query = query.where('from_address', '=', filter.from);
  if (filter.since !== undefined) query = query.where('first_seen', '>=', filter.since);
  return query;
}

export async function countRecords(db: Db, accountId: string, filter: RecordFilter): Promise<number> {
  const row = await filtered(db, accountId, filter)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One page of records, newest first, each with its history. */
export async function listRecords(
  db: Db,
  accountId: string,
  filter: RecordFilter,
  limit: number,
  offset: number,
): Promise<TransactionRecord[]> {
  const rows = await filtered(db, accountId, filter)
    .selectAll()
    .orderBy('first_seen', 'desc')
    .orderBy('network')
    .orderBy('hash')
    .limit(limit)
    .offset(offset)
    .execute();
  return withHistory(db, rows);
}

/** The record of this hash in the account (the newest, should two networks have one), with its history. */
export async function getRecord(db: Db, accountId: string, hash: string): Promise<TransactionRecord | undefined> {
  const row = await db
    .selectFrom('ledger_transactions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('hash', '=', hash)
    .orderBy('first_seen', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return (await withHistory(db, [row]))[0];
}

async function withHistory(db: Db, rows: LedgerTransactionsTable[]): Promise<TransactionRecord[]> {
  if (rows.length === 0) return [];
  const events = await db
    .selectFrom('ledger_events')
    .selectAll()
    .where(
      'hash',
      'in',
      rows.map((row) => row.hash),
    )
    .orderBy('seq')
    .execute();
  const history = new Map<string, HistoryEntry[]>();
  for (const event of events) {
    const key = `${event.network}\u0000${event.hash}`;
    const list = history.get(key) ?? [];
    list.push(historyEntry(event));
    history.set(key, list);
  }
  return rows.map((row) => recordView(row, history.get(`${row.network}\u0000${row.hash}`) ?? []));
}

function historyEntry(event: Pick<LedgerEventsTable, 'status' | 'data' | 'at'>): HistoryEntry {
  const data = JSON.parse(event.data) as TransactionAlertData;
  const entry: HistoryEntry = { status: event.status, at: event.at };
  if (data.block_number !== null) entry.block_number = data.block_number;
  if (data.block_hash !== null) entry.block_hash = data.block_hash;
  return entry;
}

function recordView(row: LedgerTransactionsTable, history: HistoryEntry[]): TransactionRecord {
  return {
    hash: row.hash,
    network: row.network,
    from: row.from_address,
    nonce: Number(row.nonce),
    key_id: row.key_id,
    status: row.status,
    block_number: row.block_number === null ? null : Number(row.block_number),
    block_hash: row.block_hash,
    transaction_index: row.transaction_index === null ? null : Number(row.transaction_index),
    replaced_by: row.replaced_by,
    first_seen: row.first_seen,
    updated_at: row.updated_at,
    history,
  };
}

/** Records by network and status (switchyard_ledger_transactions). */
export async function countByStatus(db: Db): Promise<StatusCount[]> {
  const rows = await db
    .selectFrom('ledger_transactions')
    .select(['network', 'status', (eb) => eb.fn.countAll().as('n')])
    .groupBy(['network', 'status'])
    .execute();
  return rows.map((row) => ({ network: row.network, status: row.status, count: Number(row.n) }));
}
