import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/** Notification policies, webhook destinations, the delivery outbox, dispatcher cursor, correlations, history. */
export function notificationsMigration(_dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('notification_policies')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('description', 'text', (col) => col.notNull().defaultTo(''))
        .addColumn('enabled', 'integer', (col) => col.notNull())
        .addColumn('alert_type', 'text', (col) => col.notNull())
        .addColumn('mechanisms', 'text', (col) => col.notNull())
        .addColumn('filters', 'text', (col) => col.notNull())
        .addColumn('alert_interval', 'text')
        .addColumn('created', 'text', (col) => col.notNull())
        .addColumn('modified', 'text', (col) => col.notNull())
        .execute();
      await db.schema
        .createIndex('notification_policies_account')
        .on('notification_policies')
        .columns(['account_id', 'created', 'id'])
        .execute();

      await db.schema
        .createTable('webhook_destinations')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('url', 'text', (col) => col.notNull())
        .addColumn('secret', 'text')
        .addColumn('type', 'text', (col) => col.notNull())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('last_success', 'text')
        .addColumn('last_failure', 'text')
        .execute();
      await db.schema
        .createIndex('webhook_destinations_account')
        .on('webhook_destinations')
        .columns(['account_id', 'created_at', 'id'])
        .execute();

      await db.schema
        .createTable('notification_deliveries')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('account_id', 'text', (col) => col.notNull())
        .addColumn('kind', 'text', (col) => col.notNull())
        .addColumn('dedupe_key', 'text', (col) => col.notNull().unique())
        .addColumn('event_id', 'text')
        .addColumn('policy_id', 'text')
        .addColumn('mechanism_type', 'text', (col) => col.notNull())
        .addColumn('mechanism', 'text', (col) => col.notNull())
        .addColumn('message_id', 'text', (col) => col.notNull())
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'text', (col) => col.notNull())
        .addColumn('locked_until', 'text')
        .addColumn('locked_by', 'text')
        .addColumn('last_error', 'text')
        .addColumn('payload', 'text', (col) => col.notNull())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('sent_at', 'text')
        .execute();
      // The sender's claim query: pending rows by due time.
      await db.schema
        .createIndex('notification_deliveries_due')
        .on('notification_deliveries')
        .columns(['status', 'next_attempt_at'])
        .execute();

      await db.schema
        .createTable('notification_cursor')
        .addColumn('name', 'text', (col) => col.primaryKey())
        .addColumn('seq', 'bigint', (col) => col.notNull())
        .execute();

      await db.schema
        .createTable('alert_correlations')
        .addColumn('account_id', 'text', (col) => col.notNull())
        .addColumn('object_key', 'text', (col) => col.notNull())
        .addColumn('correlation_id', 'text', (col) => col.notNull())
        .addColumn('opened_at', 'text', (col) => col.notNull())
        .addPrimaryKeyConstraint('alert_correlations_pk', ['account_id', 'object_key'])
        .execute();

      await db.schema
        .createTable('notification_history')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('account_id', 'text', (col) => col.notNull())
        .addColumn('delivery_id', 'text', (col) => col.notNull())
        .addColumn('policy_id', 'text')
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('description', 'text', (col) => col.notNull())
        .addColumn('alert_body', 'text', (col) => col.notNull())
        .addColumn('alert_type', 'text', (col) => col.notNull())
        .addColumn('mechanism', 'text', (col) => col.notNull())
        .addColumn('mechanism_type', 'text', (col) => col.notNull())
        .addColumn('sent', 'text', (col) => col.notNull())
        .execute();
      await db.schema
        .createIndex('notification_history_account')
        .on('notification_history')
        .columns(['account_id', 'sent', 'id'])
        .execute();

      await db.schema
        .createTable('deprecation_notices')
        .addColumn('account_id', 'text', (col) => col.notNull())
        .addColumn('address', 'text', (col) => col.notNull())
        .addColumn('last_sent_at', 'text', (col) => col.notNull())
        .addPrimaryKeyConstraint('deprecation_notices_pk', ['account_id', 'address'])
        .execute();
    },
  };
}
