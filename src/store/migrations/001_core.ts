import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/** Accounts, API tokens, monitors and pools. */
export function coreMigration(_dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('created_on', 'text', (col) => col.notNull())
        .execute();
      await db.schema
        .createTable('api_tokens')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('token_hash', 'text', (col) => col.notNull().unique())
        .addColumn('read_only', 'integer', (col) => col.notNull())
        .addColumn('created_on', 'text', (col) => col.notNull())
        .addColumn('last_used_on', 'text')
        .execute();
      await db.schema
        .createTable('monitors')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
        .addColumn('settings', 'text', (col) => col.notNull())
        .addColumn('created_on', 'text', (col) => col.notNull())
        .addColumn('modified_on', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('monitors_account').on('monitors').columns(['account_id', 'id']).execute();
      await db.schema
        .createTable('pools')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('notification_email', 'text', (col) => col.notNull().defaultTo(''))
        .addColumn('monitor_id', 'text', (col) => col.references('monitors.id'))
        .addColumn('enabled', 'integer', (col) => col.notNull().defaultTo(1))
        .addColumn('settings', 'text', (col) => col.notNull())
        .addColumn('created_on', 'text', (col) => col.notNull())
        .addColumn('modified_on', 'text', (col) => col.notNull())
        .addColumn('version', 'integer', (col) => col.notNull().defaultTo(1))
        .addUniqueConstraint('pools_account_name', ['account_id', 'name'])
        .execute();
      // Pagination order is (name, id) within an account, for list and bulk PATCH alike.
      await db.schema.createIndex('pools_page_order').on('pools').columns(['account_id', 'name', 'id']).execute();
    },
  };
}
