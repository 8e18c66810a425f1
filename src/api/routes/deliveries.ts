/**
 * The delivery queue and the console's write actions on notifications (SPEC §13):
 *   - `GET  /accounts/:account_id/alerting/v3/deliveries` — deliveries not yet sent, newest first: `state`
 *     pending (never tried), failing (tried and failed; `last_error`, `next_attempt_at`) or dead
 *     (dead-lettered after its retry window). Query `state` (repeatable; default all three), pagination.
 *   - `POST /accounts/:account_id/alerting/v3/deliveries/:delivery_id/retry` (write) — a dead-lettered
 *     delivery gets one more attempt now (notifications/queries/delivery-queue.ts); anything else is 400.
 *   - `POST /accounts/:account_id/alerting/v3/destinations/webhooks/:webhook_id/test` (write) — sends the
 *     destination the test message (`{"text": "…test message…"}`, signed like an alert) and answers
 *     `{id, ok: true}`, or 400 API_WEBHOOK_TEST_FAILED saying what the receiver answered.
 * `mechanism` is an email address or a destination id (as in history); payload bodies are not returned.
 */
import { z } from 'zod';
import { SwitchyardError } from '../../errors/base.js';
import {
  countQueue,
  findDelivery,
  listQueue,
  QUEUE_STATES,
  type QueueState,
  queueState,
  retryDead,
} from '../../notifications/queries/delivery-queue.js';
import { getDestinationTarget } from '../../notifications/queries/destinations.js';
import { timestamp } from '../../store/ids.js';
import type { NotificationDeliveriesTable } from '../../store/tables/notifications.js';
import type { ApiDeps } from '../deps.js';
import { listPage, paginationQuery, parsePagination } from '../pagination.js';
import { accountParam, objectNotFound } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
import { fieldError } from '../validate.js';
import { sendTestMessage } from './destinations.js';

const deliveryResult = z.object({
  id: z.string(),
  state: z.enum(['pending', 'failing', 'dead', 'sent', 'cancelled']),
  kind: z.string(),
  name: z.string(),
  alert_type: z.string(),
  policy_id: z.string().nullable(),
  mechanism_type: z.enum(['email', 'webhook']),
  mechanism: z.string(),
  attempts: z.number().int(),
  last_error: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  created_at: z.string(),
});

function view(row: NotificationDeliveriesTable): z.infer<typeof deliveryResult> {
  let payload: { name?: unknown; alert_type?: unknown } = {};
  try {
    payload = JSON.parse(row.payload) as typeof payload;
  } catch {
    // A row the sender could not read either: listed with empty names.
  }
  const state = queueState(row);
  return {
    id: row.id,
    state,
    kind: row.kind,
    name: typeof payload.name === 'string' ? payload.name : '',
    alert_type: typeof payload.alert_type === 'string' ? payload.alert_type : '',
    policy_id: row.policy_id,
    mechanism_type: row.mechanism_type,
    mechanism: row.mechanism,
    attempts: row.attempts,
    last_error: row.last_error,
    next_attempt_at: state === 'pending' || state === 'failing' ? row.next_attempt_at : null,
    created_at: row.created_at,
  };
}

function statesOf(query: URLSearchParams): QueueState[] {
  const asked = query.getAll('state');
  if (asked.length === 0) return [...QUEUE_STATES];
  for (const state of asked) {
    if (!(QUEUE_STATES as readonly string[]).includes(state)) {
      throw fieldError('state', `"${state.slice(0, 40)}" is not one of ${QUEUE_STATES.join(', ')}`);
    }
  }
  return [...new Set(asked as QueueState[])];
}

export function deliveryRoutes(deps: ApiDeps): Route[] {
  return [listQueueRoute(deps), retryDeliveryRoute(deps), testWebhookRoute(deps)];
}

function listQueueRoute({ store }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: '/accounts/:account_id/alerting/v3/deliveries',
    auth: 'read',
    summary: 'List the delivery queue: pending, failing and dead-lettered notifications, newest first',
    tag: 'notifications',
    query: paginationQuery.extend({
      state: z.enum(['pending', 'failing', 'dead']).optional().describe('Only these states (repeatable).'),
    }),
    result: z.array(deliveryResult),
    paginated: true,
    async handler({ params, query }) {
      const page = parsePagination(query);
      const states = statesOf(query);
      const accountId = accountParam(params);
      return listPage(
        page,
        () => countQueue(store.db, accountId, states),
        (limit, offset) => listQueue(store.db, accountId, states, limit, offset),
        view,
      );
    },
  });
}

function retryDeliveryRoute({ store, clock }: ApiDeps): Route {
  return defineRoute({
    method: 'POST',
    path: '/accounts/:account_id/alerting/v3/deliveries/:delivery_id/retry',
    auth: 'write',
    summary: 'Give a dead-lettered delivery one more attempt now',
    tag: 'notifications',
    result: deliveryResult,
    async handler({ params }) {
      const accountId = accountParam(params);
      const id = params.delivery_id as string;
      const row = await findDelivery(store.db, accountId, id);
      if (row === undefined) throw objectNotFound('delivery', id);
      const now = timestamp(clock);
      if (!(await retryDead(store.db, accountId, id, now))) {
        throw new SwitchyardError(
          'API_VALIDATION',
          `delivery_id: delivery ${id} is ${queueState(row)}; only a dead-lettered delivery can be retried`,
        );
      }
      // As written (the sender may already be attempting it).
      return {
        result: view({ ...row, status: 'pending', next_attempt_at: now, locked_by: null, locked_until: null }),
      };
    },
  });
}

function testWebhookRoute({ store, secrets, clock, config, outbound }: ApiDeps): Route {
  return defineRoute({
    method: 'POST',
    path: '/accounts/:account_id/alerting/v3/destinations/webhooks/:webhook_id/test',
    auth: 'write',
    summary: 'Send a webhook destination the test message',
    tag: 'notifications',
    result: z.object({ id: z.string(), ok: z.literal(true) }),
    async handler({ params }) {
      const accountId = accountParam(params);
      const id = params.webhook_id as string;
      const destination = await getDestinationTarget(store.db, secrets, id);
      if (destination?.account_id !== accountId) throw objectNotFound('webhook destination', id);
      await sendTestMessage(config, outbound, accountId, destination.url, destination.secret, clock.now());
      return { result: { id, ok: true as const } };
    },
  });
}
