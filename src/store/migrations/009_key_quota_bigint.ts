import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * `gateway_keys.daily_quota` holds up to 10^12 calls (SPEC §20, model/limit-bounds.ts): PostgreSQL's
 * `integer` stops at 2^31 − 1, so the column becomes `bigint` there (read back as a string, which the
 * key queries turn into a number). SQLite's INTEGER is 64-bit already: nothing to do.
 */
export function keyQuotaBigintMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'postgres') return;
      await db.schema
        .alterTable('gateway_keys')
        .alterColumn('daily_quota', (column) => column.setDataType('bigint'))
        .execute();
    },
  };
}
