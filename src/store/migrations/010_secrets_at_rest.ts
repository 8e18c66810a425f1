import type { Kysely } from 'kysely';
import { maskAddress } from '../../model/origin-address.js';
import type { Dialect } from '../database.js';

/**
 * Secrets at rest (SPEC §16; store-secrets.ts, secrets/):
 * - `secrets_key`: one row naming the key the store's secrets are sealed with (its id and a check value
 *   sealed with it); written at the first start that has a key.
 * - `webhook_destinations.sealed`: the destination's sealed URL and secret (null while nothing is sealed:
 *   rows written before are read as they are and sealed at the next start).
 * - `origin_health.origin_address` holds the masked address from now on (health compares an origin's
 *   masked address with it): rows written before held the full address with its credentials, so they are
 *   masked here and the health state they carry is kept.
 * Sealing the existing pools, monitors and webhook destinations needs the key, which a migration does not
 * have: the start that holds it does that (secrets/open.ts).
 */
export function secretsAtRestMigration(_dialect: Dialect) {
  return {
    async up(untyped: Kysely<unknown>): Promise<void> {
      // biome-ignore lint/suspicious/noExplicitAny: a migration sees the tables as they are at this step.
      const db = untyped as Kysely<any>;
      await db.schema
        .createTable('secrets_key')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('key_id', 'text', (col) => col.notNull())
        .addColumn('check_value', 'text', (col) => col.notNull())
        .addColumn('modified_on', 'text', (col) => col.notNull())
        .execute();
      await db.schema.alterTable('webhook_destinations').addColumn('sealed', 'text').execute();
      const rows: Array<{ origin_address: string }> = await db
        .selectFrom('origin_health')
        .select('origin_address')
        .distinct()
        .execute();
      for (const { origin_address: full } of rows) {
        const masked = maskAddress(full);
        if (masked === full) continue;
        await db
          .updateTable('origin_health')
          .set({ origin_address: masked })
          .where('origin_address', '=', full)
          .execute();
      }
    },
  };
}
