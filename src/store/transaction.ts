import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/**
 * Runs `work` in a transaction, or inside the caller's when `db` already is one (Kysely has no nested
 * transactions), so store functions compose: seeding creates a monitor and its pool atomically with the
 * same `createPool` the API uses.
 */
export function inTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db);
  return db.transaction().execute((trx: Transaction<Database>) => work(trx));
}
