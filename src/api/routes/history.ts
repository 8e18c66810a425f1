/**
 * Notification history: `GET /accounts/:account_id/alerting/v3/history` — what was sent, newest first
 * (Cloudflare shape). Query: `page` (default 1), `per_page` (5..1000, default 25; or limit/offset),
 * `since` / `before` (RFC 3339; `since` inclusive, `before` exclusive; both optional, so without them
 * the whole history is listed). A page past the end is `result: []` — the official SDK's auto-pager
 * stops on it. Every sent delivery is listed: policy alerts (with `policy_id`), legacy per-pool email
 * and deprecation notices (`policy_id: null`).
 */
import { z } from 'zod';
import { countHistory, type HistoryRange, listHistory } from '../../notifications/queries/history.js';
import type { NotificationHistoryTable } from '../../store/tables/notifications.js';
import type { ApiDeps } from '../deps.js';
import { listPage, paginationQuery, parsePagination } from '../pagination.js';
import { accountParam } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
import { fieldError } from '../validate.js';

const MIN_PER_PAGE = 5;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

const historyResult = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  alert_body: z.string(),
  alert_type: z.string(),
  mechanism: z.string(),
  mechanism_type: z.enum(['email', 'webhook']),
  policy_id: z.string().nullable(),
  sent: z.string(),
});

function view(row: NotificationHistoryTable): z.infer<typeof historyResult> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    alert_body: row.alert_body,
    alert_type: row.alert_type,
    mechanism: row.mechanism,
    mechanism_type: row.mechanism_type,
    policy_id: row.policy_id,
    sent: row.sent,
  };
}

function dateParam(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length === 0) return undefined;
  const raw = values[0] as string;
  const ms = Date.parse(raw);
  if (values.length > 1 || !RFC3339.test(raw) || Number.isNaN(ms)) {
    throw fieldError(name, `"${raw.slice(0, 40)}" is not an RFC 3339 date-time, e.g. 2026-01-31T00:00:00Z`);
  }
  return new Date(ms).toISOString();
}

export function historyRoutes(deps: ApiDeps): Route[] {
  const db = deps.store.db;
  return [
    defineRoute({
      method: 'GET',
      path: '/accounts/:account_id/alerting/v3/history',
      auth: 'read',
      summary: 'List sent notifications, newest first (since/before filter by sent time)',
      tag: 'notifications',
      query: paginationQuery.extend({
        since: z.string().optional().describe('RFC 3339; only notifications sent at or after it.'),
        before: z.string().optional().describe('RFC 3339; only notifications sent before it.'),
      }),
      result: z.array(historyResult),
      paginated: true,
      async handler({ params, query }) {
        const page = parsePagination(query);
        if (page.limit < MIN_PER_PAGE) {
          const name = query.has('limit') ? 'limit' : 'per_page';
          throw fieldError(name, `${page.limit} is out of range; it must be an integer from ${MIN_PER_PAGE} to 1000`);
        }
        const range: HistoryRange = { since: dateParam(query, 'since'), before: dateParam(query, 'before') };
        const accountId = accountParam(params);
        return listPage(
          page,
          () => countHistory(db, accountId, range),
          (limit, offset) => listHistory(db, accountId, range, limit, offset),
          view,
        );
      },
    }),
  ];
}
