import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Chain incidents (SPEC §14): one row per incident (store/tables/incidents.ts). `open_key` is unique and
 * null once closed (NULLs never collide on SQLite or PostgreSQL), so at most one incident per network and
 * kind is open across every process sharing the store. The dispatcher finds work by the two flags.
 */
export function chainIncidentsMigration(_dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('chain_incidents')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('network', 'text', (col) => col.notNull())
        .addColumn('kind', 'text', (col) => col.notNull())
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('open_key', 'text', (col) => col.unique())
        .addColumn('data', 'text', (col) => col.notNull())
        .addColumn('scope', 'text', (col) => col.notNull())
        .addColumn('end_data', 'text')
        .addColumn('opened_at', 'text', (col) => col.notNull())
        .addColumn('closed_at', 'text')
        .addColumn('start_dispatched', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('end_dispatched', 'integer', (col) => col.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex('chain_incidents_undispatched')
        .on('chain_incidents')
        .columns(['start_dispatched', 'end_dispatched'])
        .execute();
    },
  };
}
