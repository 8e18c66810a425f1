/**
 * Migration status of legacy per-pool email:
 * `GET /accounts/:account_id/load_balancers/notification_migration` →
 * `{complete, pools_with_legacy_email, addresses}` — `complete` is true when no pool of the account has
 * a non-empty `notification_email` (then no deprecation notice is sent); `pools_with_legacy_email` is
 * how many still have one; `addresses` the distinct addresses they list (lower-cased, sorted).
 */
import { z } from 'zod';
import { parseNotificationEmail } from '../../model/pool-schema.js';
import { poolsWithLegacyEmail } from '../../pools/legacy-email.js';
import type { ApiDeps } from '../deps.js';
import { accountParam } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';

const statusResult = z.object({
  complete: z.boolean(),
  pools_with_legacy_email: z.number().int(),
  addresses: z.array(z.string()),
});

export function notificationMigrationRoutes(deps: ApiDeps): Route[] {
  const db = deps.store.db;
  return [
    defineRoute({
      method: 'GET',
      path: '/accounts/:account_id/load_balancers/notification_migration',
      auth: 'read',
      summary: 'Whether every pool has moved off the legacy notification_email',
      tag: 'notifications',
      result: statusResult,
      async handler({ params }) {
        const pools = await poolsWithLegacyEmail(db, accountParam(params));
        const addresses = new Set(
          pools.flatMap((pool) => parseNotificationEmail(pool.notification_email).map((a) => a.toLowerCase())),
        );
        return {
          result: {
            complete: pools.length === 0,
            pools_with_legacy_email: pools.length,
            addresses: [...addresses].sort(),
          },
        };
      },
    }),
  ];
}
