/**
 * The health events timeline: `GET /accounts/:account_id/load_balancers/health_events` — every recorded
 * change of an origin's or a pool's established health, newest first (SPEC §13). Query: `pool_id`,
 * `since` (RFC 3339, inclusive), pagination (default 25 per page, at most 1000). Events are kept until the
 * notification dispatcher has handled them and their retention passed (notifications/queries/retention.ts),
 * so the timeline reaches back as far as `notifications.retention`. Origin addresses are not returned
 * (they may carry a provider key); origins are named.
 */
import { z } from 'zod';
import { countAccountEvents, type EventFilter, type HealthEventRow, listAccountEvents } from '../../health/events.js';
import type { ApiDeps } from '../deps.js';
import { listPage, paginationQuery, parsePagination } from '../pagination.js';
import { accountParam } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
import { rfc3339Param } from '../validate.js';

export const healthEventResult = z.object({
  id: z.string(),
  event_source: z.enum(['origin', 'pool']),
  pool_id: z.string(),
  pool_name: z.string(),
  origin_name: z.string().nullable(),
  previous: z.enum(['Healthy', 'Unhealthy', 'Unknown']),
  new_health: z.enum(['Healthy', 'Unhealthy']),
  reason: z.string(),
  occurred_at: z.string(),
});

function view(row: HealthEventRow): z.infer<typeof healthEventResult> {
  return {
    id: row.id,
    event_source: row.event_source,
    pool_id: row.pool_id,
    pool_name: row.pool_name,
    origin_name: row.origin_name,
    previous: row.previous,
    new_health: row.new_health,
    reason: row.reason,
    occurred_at: row.occurred_at,
  };
}

function filterOf(query: URLSearchParams): EventFilter {
  const filter: EventFilter = {};
  const poolId = query.get('pool_id');
  if (poolId !== null) filter.poolId = poolId;
  const since = query.get('since');
  if (since !== null) filter.since = rfc3339Param('since', since);
  return filter;
}

export function healthEventRoutes(deps: Pick<ApiDeps, 'store'>): Route[] {
  const db = deps.store.db;
  return [
    defineRoute({
      method: 'GET',
      path: '/accounts/:account_id/load_balancers/health_events',
      auth: 'read',
      summary: 'List health events (origin and pool health changes), newest first',
      tag: 'health',
      query: paginationQuery.extend({
        pool_id: z.string().optional().describe('Only events of this pool.'),
        since: z.string().optional().describe('RFC 3339; only events at or after it.'),
      }),
      result: z.array(healthEventResult),
      paginated: true,
      async handler({ params, query }) {
        const page = parsePagination(query);
        const filter = filterOf(query);
        const accountId = accountParam(params);
        return listPage(
          page,
          () => countAccountEvents(db, accountId, filter),
          (limit, offset) => listAccountEvents(db, accountId, filter, limit, offset),
          view,
        );
      },
    }),
  ];
}
