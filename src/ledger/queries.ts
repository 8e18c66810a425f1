/**
 * The ledger's writes and the follower's reads (store/tables/ledger.ts has the rules). Every write that
 * several processes could race on is a compare-and-set:
 * - `insertRecords` inserts each new record once (a conflict on (network, hash) means it is recorded, by
 *   another process or an earlier send) with its `pending` history entry, and returns those it inserted;
 * - `applyChanges` moves each record from the (status, version) its follower last knew to the next, and
 *   writes the change's event in the same transaction — or, when the row moved on meanwhile, nothing;
 * - `claimOrphans` takes the followed records of processes that stopped, once (the old owner is in the
 *   WHERE clause).
 * PostgreSQL answers bigint columns as strings: numbers are read through Number().
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../store/database.js';
import type { LedgerTransactionsTable } from '../store/tables/ledger.js';
import { inTransaction } from '../store/transaction.js';
import type { Followed, Inclusion, LedgerEventStatus, LedgerStatus, TransactionAlertData } from './types.js';

const FOLLOWED_STATUSES: readonly LedgerStatus[] = ['pending', 'included'];

/** A record as the recorder inserts it. */
export interface NewRecord {
  network: string;
  hash: string;
  accountId: string;
  from: string;
  nonce: number;
  keyId: string | null;
  client: string;
  origins: readonly string[];
  raw: string;
  owner: string;
  /** RFC 3339. */
  at: string;
}

/** One state change of one record, as the follower decided it. */
export interface LedgerChange {
  readonly record: Followed;
  /** What the row must still be for the change to apply. */
  readonly from: { readonly status: LedgerStatus; readonly version: number };
  readonly to: LedgerStatus;
  /** The history entry and alert: `to`, or `reorged` (the record returns to pending). */
  readonly event: LedgerEventStatus;
  /** Where it is included (`included`); null clears the block (`reorged`); undefined keeps it. */
  readonly inclusion?: Inclusion | null;
  readonly replacedBy?: string;
  /** The block the event is about (a reorg: the block that left the chain). */
  readonly eventBlock?: { readonly number: number; readonly hash: string };
  /** RFC 3339. */
  readonly at: string;
}

/** Inserts what is not recorded yet (with its `pending` history entry); returns the keys it inserted. */
export async function insertRecords(db: Db, records: readonly NewRecord[]): Promise<Set<string>> {
  const inserted = new Set<string>();
  if (records.length === 0) return inserted;
  await inTransaction(db, async (trx) => {
    const rows = await trx
      .insertInto('ledger_transactions')
      .values(records.map(recordRow))
      .onConflict((oc) => oc.columns(['network', 'hash']).doNothing())
      .returning(['network', 'hash'])
      .execute();
    for (const row of rows) inserted.add(recordKey(row.network, row.hash));
    const events = records.filter((record) => inserted.has(recordKey(record.network, record.hash)));
    if (events.length === 0) return;
    await trx
      .insertInto('ledger_events')
      .values(
        events.map((record) => ({
          id: randomUUID(),
          network: record.network,
          hash: record.hash,
          account_id: record.accountId,
          status: 'pending' as const,
          data: JSON.stringify(pendingData(record)),
          at: record.at,
          // No alert is about a send being recorded.
          dispatched: 1,
        })),
      )
      .execute();
  });
  return inserted;
}

export function recordKey(network: string, hash: string): string {
  return `${network}\u0000${hash}`;
}

function recordRow(record: NewRecord) {
  return {
    network: record.network,
    hash: record.hash,
    account_id: record.accountId,
    from_address: record.from,
    nonce: record.nonce,
    key_id: record.keyId,
    client: record.client,
    origins: JSON.stringify(record.origins),
    status: 'pending' as const,
    version: 0,
    block_number: null,
    block_hash: null,
    transaction_index: null,
    replaced_by: null,
    raw: record.raw,
    rebroadcasts: 0,
    owner: record.owner,
    first_seen: record.at,
    updated_at: record.at,
  };
}

function pendingData(record: NewRecord): TransactionAlertData {
  return {
    network: record.network,
    hash: record.hash,
    from: record.from,
    nonce: record.nonce,
    status: 'pending',
    previous_status: null,
    block_number: null,
    block_hash: null,
    replaced_by: null,
    key_id: record.keyId,
  };
}

/** Applies the changes in one transaction; per change, whether it applied (false: the row moved on). */
export async function applyChanges(db: Db, changes: readonly LedgerChange[]): Promise<boolean[]> {
  if (changes.length === 0) return [];
  return inTransaction(db, async (trx) => {
    const applied: boolean[] = [];
    for (const change of changes) applied.push(await applyChange(trx, change));
    return applied;
  });
}

async function applyChange(db: Db, change: LedgerChange): Promise<boolean> {
  const { record, inclusion } = change;
  const blockColumns =
    inclusion === undefined
      ? {}
      : {
          block_number: inclusion?.number ?? null,
          block_hash: inclusion?.hash ?? null,
          transaction_index: inclusion?.index ?? null,
        };
  const result = await db
    .updateTable('ledger_transactions')
    .set({
      status: change.to,
      version: change.from.version + 1,
      ...blockColumns,
      ...(change.replacedBy === undefined ? {} : { replaced_by: change.replacedBy }),
      updated_at: change.at,
    })
    .where('network', '=', record.network)
    .where('hash', '=', record.hash)
    .where('status', '=', change.from.status)
    .where('version', '=', change.from.version)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return false;
  const block = change.eventBlock ?? (inclusion ? { number: inclusion.number, hash: inclusion.hash } : undefined);
  const data: TransactionAlertData = {
    network: record.network,
    hash: record.hash,
    from: record.from,
    nonce: record.nonce,
    status: change.event,
    previous_status: change.from.status,
    block_number: block?.number ?? null,
    block_hash: block?.hash ?? null,
    replaced_by: change.replacedBy ?? null,
    key_id: record.keyId,
  };
  await db
    .insertInto('ledger_events')
    .values({
      id: randomUUID(),
      network: record.network,
      hash: record.hash,
      account_id: record.accountId,
      status: change.event,
      data: JSON.stringify(data),
      at: change.at,
      dispatched: 0,
    })
    .execute();
  return true;
}

/** Sets who follows these records ('' = nobody: left untracked). */
export async function setOwner(db: Db, records: readonly Followed[], owner: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    for (const record of records) {
      await trx
        .updateTable('ledger_transactions')
        .set({ owner })
        .where('network', '=', record.network)
        .where('hash', '=', record.hash)
        .execute();
    }
  });
}

export async function setRebroadcasts(db: Db, record: Followed): Promise<void> {
  await db
    .updateTable('ledger_transactions')
    .set({ rebroadcasts: record.rebroadcasts })
    .where('network', '=', record.network)
    .where('hash', '=', record.hash)
    .execute();
}

/** The signed bytes of a record, while `keep_raw` keeps them. */
export async function rawOf(db: Db, network: string, hash: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('ledger_transactions')
    .select('raw')
    .where('network', '=', network)
    .where('hash', '=', hash)
    .executeTakeFirst();
  return row?.raw ?? undefined;
}

/** A followed record as the store holds it (`checkAt` and `absentSince` start over). */
export function followedOf(row: LedgerTransactionsTable, checkAt: number): Followed {
  const inclusion =
    row.block_number === null || row.block_hash === null
      ? undefined
      : { number: Number(row.block_number), hash: row.block_hash, index: Number(row.transaction_index ?? 0) };
  return {
    network: row.network,
    hash: row.hash,
    from: row.from_address,
    nonce: Number(row.nonce),
    keyId: row.key_id,
    accountId: row.account_id,
    firstSeen: Date.parse(row.first_seen),
    status: row.status === 'included' ? 'included' : 'pending',
    version: Number(row.version),
    inclusion,
    rebroadcasts: Number(row.rebroadcasts),
    absentSince: undefined,
    checkAt,
  };
}

// ── Instances: heartbeats and takeover ──

export async function heartbeat(db: Db, id: string, at: string): Promise<void> {
  await db
    .insertInto('ledger_instances')
    .values({ id, seen_at: at })
    .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: at }))
    .execute();
}

export async function removeInstance(db: Db, id: string): Promise<void> {
  await db.deleteFrom('ledger_instances').where('id', '=', id).execute();
}

/** Forgets instances not seen since `before` (every other one, on the embedded store at start). */
export async function removeSilentInstances(db: Db, before: string, except: string): Promise<void> {
  await db.deleteFrom('ledger_instances').where('seen_at', '<', before).where('id', '<>', except).execute();
}

/**
 * Takes over the followed records whose owner has no heartbeat row (stopped, or forgotten as silent) for
 * `owner`; returns the rows taken.
 */
export async function claimOrphans(db: Db, owner: string): Promise<LedgerTransactionsTable[]> {
  const owners = await db
    .selectFrom('ledger_transactions')
    .select('owner')
    .distinct()
    .where('status', 'in', [...FOLLOWED_STATUSES])
    .where('owner', '<>', '')
    .where('owner', '<>', owner)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('ledger_instances')
            .select('ledger_instances.id')
            .whereRef('ledger_instances.id', '=', 'ledger_transactions.owner'),
        ),
      ),
    )
    .execute();
  const claimed: LedgerTransactionsTable[] = [];
  for (const { owner: orphaned } of owners) {
    const rows = await db
      .updateTable('ledger_transactions')
      .set({ owner })
      .where('owner', '=', orphaned)
      .where('status', 'in', [...FOLLOWED_STATUSES])
      .returningAll()
      .execute();
    claimed.push(...rows);
  }
  return claimed;
}
