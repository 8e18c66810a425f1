import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Health tables (owned by src/health/):
 * - `health_events`: the hand-off to notifications, one row per change of an established health state,
 *   consumed in `seq` order. `seq` is the only auto-increment key in the schema, hence the dialect switch.
 * - `origin_health` / `pool_health`: the shared, live state of every monitored origin and pool. Each row
 *   carries a `generation` that every state write compares-and-sets, so with several `serve` processes on
 *   one PostgreSQL exactly one of them records a change (and its event). `pool_health` also holds the
 *   per-pool checker lease (`lease_owner`, `lease_until`): only the lease holder probes a pool.
 */
export function healthMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('health_events')
        .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (col) =>
          dialect === 'postgres' ? col.primaryKey() : col.primaryKey().autoIncrement(),
        )
        .addColumn('id', 'text', (col) => col.notNull().unique())
        .addColumn('account_id', 'text', (col) => col.notNull())
        .addColumn('event_source', 'text', (col) => col.notNull())
        .addColumn('pool_id', 'text', (col) => col.notNull())
        .addColumn('pool_name', 'text', (col) => col.notNull())
        .addColumn('origin_name', 'text')
        .addColumn('origin_address', 'text')
        .addColumn('previous', 'text', (col) => col.notNull())
        .addColumn('new_health', 'text', (col) => col.notNull())
        .addColumn('reason', 'text', (col) => col.notNull())
        .addColumn('occurred_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('health_events_pool').on('health_events').columns(['pool_id', 'seq']).execute();

      await db.schema
        .createTable('origin_health')
        .addColumn('pool_id', 'text', (col) => col.notNull())
        .addColumn('origin_name', 'text', (col) => col.notNull())
        .addColumn('origin_address', 'text', (col) => col.notNull())
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('failures', 'integer', (col) => col.notNull())
        .addColumn('successes', 'integer', (col) => col.notNull())
        .addColumn('last_ok', 'integer', (col) => col.notNull())
        .addColumn('failure_reason', 'text', (col) => col.notNull())
        .addColumn('response_code', 'integer')
        .addColumn('rtt_ms', 'integer')
        .addColumn('checked_at', 'text', (col) => col.notNull())
        .addColumn('changed_at', 'text')
        .addColumn('generation', 'integer', (col) => col.notNull())
        .addPrimaryKeyConstraint('origin_health_pk', ['pool_id', 'origin_name'])
        .execute();

      await db.schema
        .createTable('pool_health')
        .addColumn('pool_id', 'text', (col) => col.primaryKey())
        .addColumn('account_id', 'text', (col) => col.notNull())
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('changed_at', 'text')
        .addColumn('generation', 'integer', (col) => col.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', 'text')
        .execute();
    },
  };
}
