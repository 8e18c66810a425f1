/**
 * Webhook destinations: `/accounts/:account_id/alerting/v3/destinations/webhooks` (CRUD).
 *
 * - Creating (POST → 201 `{id}`) or changing (PUT → `{id}`) a destination first checks the URL
 *   (http/https; link-local and cloud metadata addresses always refused, private ones when
 *   `webhooks.deny_private` — also for every address the host resolves to) and then POSTs the test
 *   message `{"text": "…test message…"}` with the same headers and signature as a real alert; anything
 *   but a 2xx answer is 400 (API_WEBHOOK_TEST_FAILED) and nothing is saved.
 * - The `secret` is write-only: accepted on POST/PUT (PUT without `secret` keeps it, `""` removes it),
 *   never returned. `last_success` / `last_failure` follow every test message and delivery attempt.
 * - A destination a policy still sends to cannot be deleted (400 naming the policies), so no policy
 *   silently loses a target.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../../config/schema.js';
import { SwitchyardError } from '../../errors/base.js';
import { TEST_MESSAGE_BODY } from '../../notifications/messages.js';
import { checkResolvedHost, checkWebhookUrl, TargetRefusedError } from '../../notifications/target-safety.js';
import { WebhookClient } from '../../notifications/webhook.js';
import { plainText } from '../../plain-text.js';
import {
  countDestinations,
  deleteDestination,
  getDestination,
  getDestinationTarget,
  insertDestination,
  listDestinations,
  recordDestinationOutcome,
  updateDestination,
  type WebhookDestination,
} from '../../store/destinations.js';
import { timestamp } from '../../store/ids.js';
import { policiesUsingDestination } from '../../store/policies.js';
import type { ApiDeps } from '../deps.js';
import { listPage, paginationQuery, parsePagination } from '../pagination.js';
import { accountParam, objectNotFound } from '../path-params.js';
import { defineRoute, type Route } from '../router.js';
import { fieldError } from '../validate.js';

const BASE = '/accounts/:account_id/alerting/v3/destinations/webhooks';
const TAG = 'notifications';

const readOnly = z.unknown().optional().describe('Read-only; ignored on input.');
const fields = {
  name: plainText().min(1).max(256),
  url: z.string().min(1).max(2048).describe('http:// or https:// URL that answers the test message with 2xx.'),
  // Sent as a header value (cf-webhook-auth): no control characters.
  secret: plainText()
    .max(1024)
    .optional()
    .describe('Write-only. Sent as cf-webhook-auth and used to sign (Standard Webhooks); never returned.'),
  id: readOnly,
  type: readOnly,
  created_at: readOnly,
  last_success: readOnly,
  last_failure: readOnly,
};
const createBody = z.strictObject(fields);
const updateBody = z.strictObject({ ...fields, name: fields.name.optional(), url: fields.url.optional() });

const destinationResult = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  type: z.literal('generic'),
  created_at: z.string(),
  last_success: z.string().nullable(),
  last_failure: z.string().nullable(),
});

function view(destination: WebhookDestination): z.infer<typeof destinationResult> {
  return {
    id: destination.id,
    name: destination.name,
    url: destination.url,
    type: 'generic',
    created_at: destination.created_at,
    last_success: destination.last_success,
    last_failure: destination.last_failure,
  };
}

function notFound(id: string): SwitchyardError {
  return objectNotFound('webhook destination', id);
}

/** URL checks and the test message; throws a 400 that says what to fix. Never echoes the URL. */
async function sendTestMessage(
  config: Readonly<Config>,
  url: string,
  secret: string | null,
  nowMs: number,
): Promise<void> {
  const policy = { denyPrivate: config.webhooks.deny_private };
  let host: string;
  try {
    host = checkWebhookUrl(url, policy).hostname;
    await checkResolvedHost(host, policy);
  } catch (err) {
    if (err instanceof TargetRefusedError) throw fieldError('url', err.message);
    const code = (err as { code?: unknown }).code;
    throw new SwitchyardError(
      'API_WEBHOOK_TEST_FAILED',
      `url: the host cannot be resolved (${typeof code === 'string' ? code : 'DNS error'}); check the URL`,
    );
  }
  const client = new WebhookClient({ denyPrivate: policy.denyPrivate, timeoutMs: config.webhooks.timeout });
  try {
    const result = await client.post({
      url,
      body: TEST_MESSAGE_BODY,
      messageId: `msg_${randomUUID().replaceAll('-', '')}`,
      secret,
      timestamp: Math.floor(nowMs / 1000),
    });
    if (!result.ok) {
      const got = result.status === undefined ? result.error : `HTTP ${result.status}`;
      throw new SwitchyardError(
        'API_WEBHOOK_TEST_FAILED',
        `the test message to the webhook did not get a 2xx answer (${got}); make the receiver answer 2xx and try again`,
        { details: { status: result.status ?? null } },
      );
    }
  } finally {
    await client.close();
  }
}

export function destinationRoutes(deps: ApiDeps): Route[] {
  const { store, clock, config } = deps;
  const db = store.db;
  const account = accountParam;
  const destinationId = (params: Readonly<Record<string, string>>) => params.webhook_id as string;
  const now = () => timestamp(clock);

  return [
    defineRoute({
      method: 'GET',
      path: BASE,
      auth: 'read',
      summary: 'List webhook destinations (the secret is never returned)',
      tag: TAG,
      query: paginationQuery,
      result: z.array(destinationResult),
      paginated: true,
      async handler({ params, query }) {
        return listPage(
          parsePagination(query),
          () => countDestinations(db, account(params)),
          (limit, offset) => listDestinations(db, account(params), limit, offset),
          view,
        );
      },
    }),
    defineRoute({
      method: 'POST',
      path: BASE,
      auth: 'write',
      summary: 'Create a webhook destination (after a successful test message)',
      tag: TAG,
      body: createBody,
      result: z.object({ id: z.string() }),
      successStatus: 201,
      async handler({ params, body }) {
        const secret = body.secret === undefined || body.secret === '' ? null : body.secret;
        await sendTestMessage(config, body.url, secret, clock.now());
        const id = randomUUID();
        await insertDestination(db, account(params), id, { name: body.name, url: body.url, secret }, now());
        return { status: 201, result: { id } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${BASE}/:webhook_id`,
      auth: 'read',
      summary: 'Get a webhook destination (the secret is never returned)',
      tag: TAG,
      result: destinationResult,
      async handler({ params }) {
        const destination = await getDestination(db, account(params), destinationId(params));
        if (destination === undefined) throw notFound(destinationId(params));
        return { result: view(destination) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${BASE}/:webhook_id`,
      auth: 'write',
      summary: 'Change a webhook destination (after a successful test message)',
      tag: TAG,
      body: updateBody,
      result: z.object({ id: z.string() }),
      async handler({ params, body }) {
        const id = destinationId(params);
        const current = await getDestination(db, account(params), id);
        const target = current === undefined ? undefined : await getDestinationTarget(db, id);
        if (current === undefined || target === undefined) throw notFound(id);
        const secret = body.secret === undefined ? target.secret : body.secret === '' ? null : body.secret;
        const url = body.url ?? current.url;
        try {
          await sendTestMessage(config, url, secret, clock.now());
        } catch (err) {
          await recordDestinationOutcome(db, id, false, now());
          throw err;
        }
        await updateDestination(db, account(params), id, { name: body.name ?? current.name, url, secret }, now());
        return { result: { id } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: `${BASE}/:webhook_id`,
      auth: 'write',
      summary: 'Delete a webhook destination (refused while a policy sends to it)',
      tag: TAG,
      result: z.null(),
      async handler({ params }) {
        const id = destinationId(params);
        if ((await getDestination(db, account(params), id)) === undefined) throw notFound(id);
        const users = await policiesUsingDestination(db, account(params), id);
        if (users.length > 0) {
          const names = users.map((policy) => `"${policy.name}" (${policy.id})`).join(', ');
          throw new SwitchyardError(
            'API_IN_USE',
            `webhook destination ${id} is used by notification policy ${names}; remove it from their mechanisms.webhooks first`,
            { details: { policies: users.map((policy) => policy.id) } },
          );
        }
        if (!(await deleteDestination(db, account(params), id))) throw notFound(id);
        return { result: null };
      },
    }),
  ];
}
