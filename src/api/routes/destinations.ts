/**
 * Webhook destinations: `/accounts/:account_id/alerting/v3/destinations/webhooks` (CRUD).
 *
 * - Creating (POST → 201 `{id}`) or changing (PUT → `{id}`) a destination first checks the URL with the
 *   account's outbound policy (outbound/policy.ts: http/https; link-local, metadata, multicast,
 *   broadcast and unspecified always refused; loopback, private and CGNAT only for accounts in
 *   `outbound.trusted_accounts` and never with `webhooks.deny_private` — also for every address the
 *   host resolves to; 400 / 1002 naming `url`) and then POSTs the test
 *   message `{"text": "…test message…"}` with the same headers and signature as a real alert; anything
 *   but a 2xx answer is 400 (API_WEBHOOK_TEST_FAILED) and nothing is saved.
 * - The `secret` is write-only: accepted on POST/PUT (PUT without `secret`, or with `***`, keeps it; `""`
 *   removes it), never returned. `last_success` / `last_failure` follow every test message and delivery
 *   attempt.
 * - The URL is returned masked (model/origin-address.ts `maskAddress`: credentials, query values and
 *   key-like path segments as `***`); a PUT may send the masked URL back, each `***` standing for the
 *   stored part at that place.
 * - Secrets stay bound to their destination: a kept secret or a `***` in the URL is accepted only while the
 *   URL's scheme, host and port are unchanged; otherwise 400 "re-enter the secret for the new
 *   destination" and nothing changes. `***` is never stored as a secret or as part of a URL.
 * - A destination a policy still sends to cannot be deleted (400 naming the policies), so no policy
 *   silently loses a target.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../../config/schema.js';
import { SwitchyardError } from '../../errors/base.js';
import {
  destinationOf,
  hasForbiddenCharacters,
  isMasked,
  MASK,
  maskAddress,
  unmaskAddress,
} from '../../model/origin-address.js';
import { plainText } from '../../model/plain-text.js';
import { messageIdOf } from '../../notifications/delivery-rows.js';
import { TEST_MESSAGE_BODY } from '../../notifications/messages.js';
import { policiesUsingDestination } from '../../notifications/queries/alert-policies.js';
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
} from '../../notifications/queries/destinations.js';
import { WebhookClient } from '../../notifications/webhook.js';
import { type OutboundPolicy, TargetRefusedError } from '../../outbound/policy.js';
import { timestamp } from '../../store/ids.js';
import type { ApiDeps } from '../deps.js';
import { listPage, MAX_PER_PAGE, paginationQuery, parsePagination } from '../pagination.js';
import { accountParam, objectNotFound } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
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
    url: maskAddress(destination.url),
    type: 'generic',
    created_at: destination.created_at,
    last_success: destination.last_success,
    last_failure: destination.last_failure,
  };
}

const RE_ENTER = 're-enter the secret for the new destination';

/** The URL's characters and masks checked: no controls or spaces, no `***` (nothing stored to stand for). */
function checkNewUrl(url: string): void {
  if (hasForbiddenCharacters(url)) {
    throw fieldError('url', 'must not contain control characters (CR, LF, NUL, tab, …), spaces or backslashes');
  }
  if (isMasked(url)) throw fieldError('url', 'contains a masked value (***); send the full URL');
}

function checkNewSecret(secret: string | undefined): void {
  if (secret === MASK) throw fieldError('secret', 'a masked value (***) cannot be stored; send the real secret');
}

/**
 * The URL and secret a PUT stores: `***` in the URL and an omitted or `***` secret take the stored values,
 * only while the destination (scheme, host, port) is the stored one.
 */
function resolveUpdate(
  sentUrl: string | undefined,
  sentSecret: string | undefined,
  stored: { url: string; secret: string | null },
): { url: string; secret: string | null } {
  let url = sentUrl ?? stored.url;
  if (sentUrl !== undefined && isMasked(sentUrl)) {
    const resolved = unmaskAddress(sentUrl, stored.url);
    if ('refused' in resolved) {
      throw fieldError(
        'url',
        resolved.refused === 'destination'
          ? `the scheme, host or port differs from the stored URL: ${RE_ENTER}`
          : 'contains a masked value (***) that stands for nothing stored at that place of the URL; send the full URL',
      );
    }
    url = resolved.address;
  }
  if (hasForbiddenCharacters(url)) {
    throw fieldError('url', 'must not contain control characters (CR, LF, NUL, tab, …), spaces or backslashes');
  }
  const keep = sentSecret === undefined || sentSecret === MASK;
  const moved = destinationOf(url) !== destinationOf(stored.url);
  if (keep && stored.secret !== null && moved) {
    throw fieldError('secret', `the URL now has another scheme, host or port: ${RE_ENTER} (or "" for none)`);
  }
  if (keep && sentSecret === MASK && stored.secret === null) {
    throw fieldError('secret', 'a masked value (***) stands for a secret this destination does not have');
  }
  return { url, secret: keep ? stored.secret : sentSecret === '' ? null : sentSecret };
}

function notFound(id: string): SwitchyardError {
  return objectNotFound('webhook destination', id);
}

/** URL checks and the test message; throws a 400 that says what to fix. Never echoes the URL. */
export async function sendTestMessage(
  config: Readonly<Config>,
  outbound: OutboundPolicy,
  accountId: string,
  url: string,
  secret: string | null,
  nowMs: number,
): Promise<void> {
  const rules = outbound.rulesFor(accountId, { denyPrivate: config.webhooks.deny_private });
  try {
    await outbound.checkResolved(outbound.checkUrl(url, rules).hostname, rules);
  } catch (err) {
    if (err instanceof TargetRefusedError) throw fieldError('url', err.message);
    const code = (err as { code?: unknown }).code;
    throw new SwitchyardError(
      'API_WEBHOOK_TEST_FAILED',
      `url: the host cannot be resolved (${typeof code === 'string' ? code : 'DNS error'}); check the URL`,
      { cause: err },
    );
  }
  const client = new WebhookClient({
    outbound,
    denyPrivate: config.webhooks.deny_private,
    timeoutMs: config.webhooks.timeout,
  });
  try {
    const result = await client.post({
      accountId,
      url,
      body: TEST_MESSAGE_BODY,
      messageId: messageIdOf(randomUUID()),
      secret,
      timestamp: Math.floor(nowMs / 1000),
    });
    // Refused at connect time: the name resolved to a refused address after the check above.
    if (!result.ok && result.refused === true) throw fieldError('url', result.error);
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
  return [
    listDestinationsRoute(deps),
    createDestinationRoute(deps),
    getDestinationRoute(deps),
    updateDestinationRoute(deps),
    deleteDestinationRoute(deps),
  ];
}

const destinationId = (params: Readonly<Record<string, string>>) => params.webhook_id as string;

function listDestinationsRoute({ store }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: BASE,
    auth: 'read',
    summary:
      'List webhook destinations (every one, up to 1000, unless per_page is given; the secret is never returned)',
    tag: TAG,
    query: paginationQuery,
    result: z.array(destinationResult),
    paginated: true,
    async handler({ params, query }) {
      return listPage(
        parsePagination(query, { defaultPerPage: MAX_PER_PAGE }),
        () => countDestinations(store.db, accountParam(params)),
        (limit, offset) => listDestinations(store.db, accountParam(params), limit, offset),
        view,
      );
    },
  });
}

function createDestinationRoute({ store, secrets, clock, config, outbound }: ApiDeps): Route {
  return defineRoute({
    method: 'POST',
    path: BASE,
    auth: 'write',
    summary: 'Create a webhook destination (after a successful test message)',
    tag: TAG,
    body: createBody,
    result: z.object({ id: z.string() }),
    successStatus: 201,
    async handler({ params, body }) {
      const account = accountParam(params);
      checkNewUrl(body.url);
      checkNewSecret(body.secret);
      const secret = body.secret === undefined || body.secret === '' ? null : body.secret;
      await sendTestMessage(config, outbound, account, body.url, secret, clock.now());
      const id = randomUUID();
      const fields = { name: body.name, url: body.url, secret };
      await insertDestination(store.db, secrets, account, id, fields, timestamp(clock));
      return { status: 201, result: { id } };
    },
  });
}

function getDestinationRoute({ store }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/:webhook_id`,
    auth: 'read',
    summary: 'Get a webhook destination (the secret is never returned)',
    tag: TAG,
    result: destinationResult,
    async handler({ params }) {
      const destination = await getDestination(store.db, accountParam(params), destinationId(params));
      if (destination === undefined) throw notFound(destinationId(params));
      return { result: view(destination) };
    },
  });
}

function updateDestinationRoute({ store, secrets, clock, config, outbound }: ApiDeps): Route {
  return defineRoute({
    method: 'PUT',
    path: `${BASE}/:webhook_id`,
    auth: 'write',
    summary: 'Change a webhook destination (after a successful test message)',
    tag: TAG,
    body: updateBody,
    result: z.object({ id: z.string() }),
    async handler({ params, body }) {
      const db = store.db;
      const account = accountParam(params);
      const id = destinationId(params);
      const current = await getDestination(db, account, id);
      const target = current === undefined ? undefined : await getDestinationTarget(db, secrets, id);
      if (current === undefined || target === undefined) throw notFound(id);
      const { url, secret } = resolveUpdate(body.url, body.secret, target);
      try {
        await sendTestMessage(config, outbound, account, url, secret, clock.now());
      } catch (err) {
        await recordDestinationOutcome(db, id, false, timestamp(clock));
        throw err;
      }
      const name = body.name ?? current.name;
      await updateDestination(db, secrets, account, id, { name, url, secret }, timestamp(clock));
      return { result: { id } };
    },
  });
}

function deleteDestinationRoute({ store }: ApiDeps): Route {
  return defineRoute({
    method: 'DELETE',
    path: `${BASE}/:webhook_id`,
    auth: 'write',
    summary: 'Delete a webhook destination (refused while a policy sends to it)',
    tag: TAG,
    result: z.null(),
    async handler({ params }) {
      const db = store.db;
      const account = accountParam(params);
      const id = destinationId(params);
      if ((await getDestination(db, account, id)) === undefined) throw notFound(id);
      const users = await policiesUsingDestination(db, account, id);
      if (users.length > 0) {
        const names = users.map((policy) => `"${policy.name}" (${policy.id})`).join(', ');
        throw new SwitchyardError(
          'API_IN_USE',
          `webhook destination ${id} is used by notification policy ${names}; remove it from their mechanisms.webhooks first`,
          { details: { policies: users.map((policy) => policy.id) } },
        );
      }
      if (!(await deleteDestination(db, account, id))) throw notFound(id);
      return { result: null };
    },
  });
}
