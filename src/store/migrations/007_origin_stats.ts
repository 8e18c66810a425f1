import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Per-origin statistics for the console (SPEC §13): `origin_stats`, one row per (pool, origin, UTC
 * minute) with requests, errors and 14 latency buckets, written only by additive upserts
 * (stats/stats-queries.ts) so every process's counts add up. Rows older than a day are deleted by the
 * flushing process (stats/recorder.ts).
 */
export function originStatsMigration(_dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      let table = db.schema
        .createTable('origin_stats')
        .addColumn('pool_id', 'text', (col) => col.notNull())
        .addColumn('origin_name', 'text', (col) => col.notNull())
        .addColumn('minute', 'bigint', (col) => col.notNull())
        .addColumn('requests', 'bigint', (col) => col.notNull().defaultTo(0))
        .addColumn('errors', 'bigint', (col) => col.notNull().defaultTo(0));
      for (let i = 0; i < 14; i += 1) {
        table = table.addColumn(`b${i}`, 'bigint', (col) => col.notNull().defaultTo(0));
      }
      await table.addPrimaryKeyConstraint('origin_stats_pk', ['pool_id', 'origin_name', 'minute']).execute();
      await db.schema.createIndex('origin_stats_minute').on('origin_stats').columns(['minute']).execute();
    },
  };
}
