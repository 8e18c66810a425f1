import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Gateway keys as resources of the routing account (SPEC §11), and their usage.
 *
 * - `gateway_keys`: one row per key; the value is stored only as its SHA-256 (`key_hash`, unique).
 *   `version` increments on every write the API makes (not on `last_used_on`), so a process can notice
 *   any change by reading `(id, version)` of every key (keys/store-key-directory.ts).
 * - `gateway_key_usage`: calls per (key, UTC day, network), `requests` and `errors`, written by additive
 *   upserts from every process (keys/usage-recorder.ts). Rows outlive their key (no foreign key), so a
 *   deleted key's history stays countable; the primary key orders a key's rows by date.
 */
export function gatewayKeysMigration(_dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('gateway_keys')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('key_hash', 'text', (col) => col.notNull().unique())
        .addColumn('enabled', 'integer', (col) => col.notNull().defaultTo(1))
        .addColumn('networks', 'text')
        .addColumn('rate_limit', 'text')
        .addColumn('daily_quota', 'integer')
        .addColumn('created_on', 'text', (col) => col.notNull())
        .addColumn('modified_on', 'text', (col) => col.notNull())
        .addColumn('last_used_on', 'text')
        .addColumn('version', 'integer', (col) => col.notNull().defaultTo(1))
        .execute();
      await db.schema
        .createIndex('gateway_keys_account')
        .on('gateway_keys')
        .columns(['account_id', 'created_on', 'id'])
        .execute();
      await db.schema
        .createTable('gateway_key_usage')
        .addColumn('key_id', 'text', (col) => col.notNull())
        .addColumn('date', 'text', (col) => col.notNull())
        .addColumn('network', 'text', (col) => col.notNull())
        .addColumn('requests', 'bigint', (col) => col.notNull().defaultTo(0))
        .addColumn('errors', 'bigint', (col) => col.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('gateway_key_usage_pk', ['key_id', 'date', 'network'])
        .execute();
      // Today's totals of every key (the quota seed) read by date.
      await db.schema.createIndex('gateway_key_usage_date').on('gateway_key_usage').columns(['date']).execute();
    },
  };
}
