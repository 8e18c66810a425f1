/**
 * The vocabulary of the transaction ledger (SPEC §19): statuses, the record as the API shows it, what a
 * `switchyard_transaction_alert` carries, and what the follower keeps in memory of a record. `ledger/`
 * records and follows; `notifications/` turns its events into deliveries; `api/` lists records.
 */
import type { LedgerEventStatus, LedgerStatus } from '../store/tables/ledger.js';

export type { LedgerEventStatus, LedgerStatus };

/** Every status a record can have; `pending` and `included` are followed, the rest are final states. */
export const LEDGER_STATUSES: readonly LedgerStatus[] = ['pending', 'included', 'final', 'replaced', 'dropped'];

/** The alert type (the name is fixed by SPEC §19). */
export const TRANSACTION_ALERT_TYPE = 'switchyard_transaction_alert';

/** The state changes a policy's `status` filter may name (each raises one alert). */
export const ALERT_STATUSES: readonly LedgerEventStatus[] = ['dropped', 'replaced', 'reorged', 'included', 'final'];

/** The alert's `data`, and what each history entry is written from. Fields that do not apply are null. */
export interface TransactionAlertData {
  network: string;
  hash: string;
  from: string;
  nonce: number;
  status: LedgerEventStatus;
  previous_status: LedgerStatus | null;
  block_number: number | null;
  block_hash: string | null;
  replaced_by: string | null;
  key_id: string | null;
}

/** One entry of a record's history (block fields only where the state has a block). */
export interface HistoryEntry {
  status: LedgerEventStatus;
  at: string;
  block_number?: number;
  block_hash?: string;
}

/** A record as `GET …/gateway/transactions[/{hash}]` answers it (SPEC §19, exactly these fields). */
export interface TransactionRecord {
  hash: string;
  network: string;
  from: string;
  nonce: number;
  key_id: string | null;
  status: LedgerStatus;
  block_number: number | null;
  block_hash: string | null;
  transaction_index: number | null;
  replaced_by: string | null;
  first_seen: string;
  updated_at: string;
  history: HistoryEntry[];
}

/** Where a transaction was included. */
export interface Inclusion {
  readonly number: number;
  readonly hash: string;
  readonly index: number;
}

/** A record the follower keeps in memory while it is `pending` or `included`. */
export interface Followed {
  readonly network: string;
  readonly hash: string;
  readonly from: string;
  readonly nonce: number;
  readonly keyId: string | null;
  readonly accountId: string;
  /** Epoch ms: when it was first seen (eviction order under max_pending). */
  readonly firstSeen: number;
  status: 'pending' | 'included';
  /** The row's version: every change is a compare-and-set on it (ledger/queries.ts). */
  version: number;
  inclusion: Inclusion | undefined;
  /** Times it was sent again (ledger.rebroadcast). */
  rebroadcasts: number;
  /** Epoch ms: the first mempool check that found it in no healthy origin, since it was last seen. */
  absentSince: number | undefined;
  /** Epoch ms: when its next mempool check is due (dropped detection). */
  checkAt: number;
}
