import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * The transaction ledger (SPEC §19, store/tables/ledger.ts has the rules):
 * - `ledger_transactions`: one row per (network, hash), inserted once by whichever process saw the send
 *   first; its `status` and `version` are changed only by compare-and-set.
 * - `ledger_events`: each record's history and the hand-off to notifications (`dispatched` 0 → 1), in
 *   `seq` order — an auto-increment key, hence the dialect switch (as `health_events`).
 * - `ledger_instances`: the heartbeat of each process that follows records, for takeover.
 */
export function transactionLedgerMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTransactions(db);
      await createEvents(db, dialect);
      await db.schema
        .createTable('ledger_instances')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('seen_at', 'text', (col) => col.notNull())
        .execute();
    },
  };
}

async function createTransactions(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ledger_transactions')
    .addColumn('network', 'text', (col) => col.notNull())
    .addColumn('hash', 'text', (col) => col.notNull())
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('from_address', 'text', (col) => col.notNull())
    .addColumn('nonce', 'bigint', (col) => col.notNull())
    .addColumn('key_id', 'text')
    .addColumn('client', 'text', (col) => col.notNull())
    .addColumn('origins', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('version', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('block_number', 'bigint')
    .addColumn('block_hash', 'text')
    .addColumn('transaction_index', 'integer')
    .addColumn('replaced_by', 'text')
    .addColumn('raw', 'text')
    .addColumn('rebroadcasts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('owner', 'text', (col) => col.notNull())
    .addColumn('first_seen', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('ledger_transactions_pk', ['network', 'hash'])
    .execute();
  const indexes: Array<[string, string[]]> = [
    ['ledger_transactions_listing', ['account_id', 'first_seen']],
    ['ledger_transactions_followed', ['status', 'owner']],
    ['ledger_transactions_age', ['network', 'updated_at']],
  ];
  for (const [name, columns] of indexes) {
    await db.schema.createIndex(name).on('ledger_transactions').columns(columns).execute();
  }
}

async function createEvents(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('ledger_events')
    .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (col) =>
      dialect === 'postgres' ? col.primaryKey() : col.primaryKey().autoIncrement(),
    )
    .addColumn('id', 'text', (col) => col.notNull().unique())
    .addColumn('network', 'text', (col) => col.notNull())
    .addColumn('hash', 'text', (col) => col.notNull())
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('data', 'text', (col) => col.notNull())
    .addColumn('at', 'text', (col) => col.notNull())
    .addColumn('dispatched', 'integer', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('ledger_events_record').on('ledger_events').columns(['network', 'hash']).execute();
  await db.schema
    .createIndex('ledger_events_undispatched')
    .on('ledger_events')
    .columns(['dispatched', 'seq'])
    .execute();
}
