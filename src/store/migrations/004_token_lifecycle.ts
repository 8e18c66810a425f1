import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Token lifecycle: status (active/disabled; "expired" is derived from expires_on), validity window,
 * modification time and the Cloudflare-style policies of every API token.
 *
 * Existing tokens keep working unchanged: status "active", no window, modified_on = created_on, and one
 * policy granting the permission group that matches their `read_only` flag on their own account. The
 * group ids are written out here (not imported) because a migration must never change once released;
 * they equal READ_GROUP_ID / WRITE_GROUP_ID in accounts/token-permissions.ts. The policy id of a migrated
 * token is the token's own id. `||` concatenation and CASE are the same on SQLite and PostgreSQL.
 */
export function tokenLifecycleMigration(_dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // SQLite adds a NOT NULL column only with a default; the defaults are then replaced row by row.
      await db.schema
        .alterTable('api_tokens')
        .addColumn('status', 'text', (col) => col.notNull().defaultTo('active'))
        .execute();
      await db.schema.alterTable('api_tokens').addColumn('expires_on', 'text').execute();
      await db.schema.alterTable('api_tokens').addColumn('not_before', 'text').execute();
      await db.schema
        .alterTable('api_tokens')
        .addColumn('modified_on', 'text', (col) => col.notNull().defaultTo(''))
        .execute();
      await db.schema
        .alterTable('api_tokens')
        .addColumn('policies', 'text', (col) => col.notNull().defaultTo('[]'))
        .execute();
      await sql`
        UPDATE api_tokens SET
          modified_on = created_on,
          policies = '[{"id":"' || id || '","effect":"allow","permission_groups":[{"id":"' ||
            CASE WHEN read_only = 1
              THEN '0e4a1dff8b6ac4534dcb286eb8df7c78","name":"Switchyard Read'
              ELSE 'b688b1f8d4ebf2e4198be92100a4496a","name":"Switchyard Write'
            END ||
            '"}],"resources":{"com.cloudflare.api.account.' || account_id || '":"*"}}]'
      `.execute(db);
      await db.schema
        .createIndex('api_tokens_account')
        .on('api_tokens')
        .columns(['account_id', 'created_on', 'id'])
        .execute();
    },
  };
}
