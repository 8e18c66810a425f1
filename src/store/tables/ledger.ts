/**
 * Row types of the transaction ledger (SPEC §19). Owned by `src/ledger/`; the notification dispatcher
 * reads and marks `ledger_events`, the API reads both. Conventions as in core.ts: timestamps RFC 3339 UTC
 * text, JSON as text, hashes and addresses 0x-prefixed lowercase hex.
 *
 * - `ledger_transactions`: one row per (network, hash), inserted once (a second insert of the same send,
 *   by another process or a resend, does nothing). `owner` is the id of the process that follows it
 *   (ledger_instances), '' when nobody does (left untracked by `max_pending`). Every status change is a
 *   compare-and-set on (`status`, `version`) that bumps `version`, so two processes never both make a
 *   change — nor both write its event.
 * - `ledger_events`: one row per state change, written in the same transaction as the change; the
 *   record's history. `dispatched` is 1 from the start for changes no alert is about (`pending`).
 * - `ledger_instances`: each following process's heartbeat; a process silent for longer than the
 *   takeover delay has its records adopted by another (ledger/instances.ts).
 */
import type { Generated } from 'kysely';

export type LedgerStatus = 'pending' | 'included' | 'final' | 'replaced' | 'dropped';
/** A history entry or alert: the statuses, and `reorged` (its block left the chain: back to pending). */
export type LedgerEventStatus = LedgerStatus | 'reorged';

export interface LedgerTransactionsTable {
  network: string;
  hash: string;
  /** The routing account at the time of the send: the account whose API and alerts show it. */
  account_id: string;
  from_address: string;
  /** bigint column: PostgreSQL answers it as a string. */
  nonce: number | string;
  key_id: string | null;
  /** The client's address (behind trusted proxies: the one they name). */
  client: string;
  /** JSON: ["pool/origin", …] — the origins that accepted it. */
  origins: string;
  status: LedgerStatus;
  version: number;
  block_number: number | string | null;
  block_hash: string | null;
  transaction_index: number | null;
  replaced_by: string | null;
  /** The signed transaction (0x hex) for rebroadcast; null once `keep_raw` passed. */
  raw: string | null;
  rebroadcasts: number;
  owner: string;
  first_seen: string;
  updated_at: string;
}

export interface LedgerEventsTable {
  seq: Generated<number | string>;
  id: string;
  network: string;
  hash: string;
  account_id: string;
  status: LedgerEventStatus;
  /** JSON: the alert's `data` (ledger/types.ts TransactionAlertData). */
  data: string;
  at: string;
  /** 0 | 1: turned into deliveries (or needing none). */
  dispatched: number;
}

export interface LedgerInstancesTable {
  id: string;
  seen_at: string;
}

export interface LedgerTables {
  ledger_transactions: LedgerTransactionsTable;
  ledger_events: LedgerEventsTable;
  ledger_instances: LedgerInstancesTable;
}
