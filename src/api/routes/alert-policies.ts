/**
 * Notification policies: `/accounts/:account_id/alerting/v3/policies` (CRUD, Cloudflare shapes).
 *
 * Rules beyond the JSON shape (each failure is 400 / 1002 naming the field, the bad value and what is
 * allowed): `alert_type` is one of notifications/alert-types.ts — `load_balancing_health_alert`, whose
 * filters are `pool_id` (pools of this account), `new_health` (⊆ Unhealthy, Healthy) and `event_source`
 * (⊆ pool, origin), or a chain-incident type (SPEC §14), whose filters are `network` (configured networks
 * not retired) and `pool_id`, or the transaction alert (SPEC §19): `network`, `key_id` (gateway keys of
 * this account) and `status` (⊆ dropped, replaced, reorged, included, final); each filter a non-empty array — an omitted filter matches everything, so a policy without `pool_id` also covers pools created
 * later; `mechanisms` has `email` (valid addresses) and/or `webhooks` (destination ids of this account),
 * at least one target in all. Duplicate targets and filter values are dropped.
 *
 * POST answers `{id}`; PUT changes the fields it names (the merged policy is validated as a whole) and
 * answers `{id}`; DELETE answers `result: null`. Lists are ordered by creation time, 25 per page.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { SwitchyardError } from '../../errors/base.js';
import { gatewayKeyVersions } from '../../keys/key-queries.js';
import { plainText } from '../../model/plain-text.js';
import { isEmailAddress } from '../../model/pool-schema.js';
import { ALERT_TYPE_NAMES, alertTypeInfo, liveNetworkNames } from '../../notifications/alert-types.js';
import { HEALTH_ALERT_TYPE } from '../../notifications/matching.js';
import {
  countPolicies,
  deletePolicy,
  getPolicy,
  insertPolicy,
  listPolicies,
  type Policy,
  type PolicyInput,
  updatePolicy,
} from '../../notifications/queries/alert-policies.js';
import { existingDestinationIds } from '../../notifications/queries/destinations.js';
import { existingPoolIds } from '../../pools/pool-queries.js';
import { timestamp } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { ApiDeps } from '../deps.js';
import { listPage, MAX_PER_PAGE, paginationQuery, parsePagination } from '../pagination.js';
import { accountParam, objectNotFound } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
import { fieldError } from '../validate.js';

const BASE = '/accounts/:account_id/alerting/v3/policies';
const TAG = 'notifications';

const MECHANISM_KEYS = ['email', 'webhooks'];

const readOnly = z.unknown().optional().describe('Read-only; ignored on input.');
const target = z.strictObject({ id: z.string().min(1).max(320) });
const mechanisms = z
  .record(z.string(), z.array(target).max(100))
  .describe('{"email": [{"id": "<address>"}], "webhooks": [{"id": "<destination id>"}]}');
const filters = z
  .record(z.string(), z.array(z.string().max(200)).max(1000))
  .describe(
    'Health alert: pool_id, new_health (Unhealthy, Healthy), event_source (pool, origin). Chain incidents: network, pool_id. Transactions: network, key_id, status. Omitted = everything',
  );

const fields = {
  name: plainText().min(1).max(256),
  alert_type: z
    .string()
    .max(100)
    .describe(`"${HEALTH_ALERT_TYPE}" or a chain-incident type (GET …/alerting/v3/available_alerts lists them).`),
  enabled: z.boolean(),
  mechanisms,
  description: plainText().max(1024).optional(),
  filters: filters.optional(),
  alert_interval: z
    .string()
    .max(32)
    .nullable()
    .optional()
    .describe('Stored and returned, not used: each health change is alerted once, at once (no repeats).'),
  id: readOnly,
  created: readOnly,
  modified: readOnly,
};
const createBody = z.strictObject(fields);
const updateBody = z.strictObject({
  ...fields,
  name: fields.name.optional(),
  alert_type: fields.alert_type.optional(),
  enabled: fields.enabled.optional(),
  mechanisms: fields.mechanisms.optional(),
});

const policyResult = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  alert_type: z.string(),
  mechanisms: z.record(z.string(), z.array(z.object({ id: z.string() }))),
  filters: z.record(z.string(), z.array(z.string())),
  alert_interval: z.string().optional(),
  created: z.string(),
  modified: z.string(),
});
const idResult = z.object({ id: z.string() });

function view(policy: Policy): z.infer<typeof policyResult> {
  return {
    id: policy.id,
    name: policy.name,
    description: policy.description,
    enabled: policy.enabled,
    alert_type: policy.alert_type,
    mechanisms: policy.mechanisms as Record<string, { id: string }[]>,
    filters: policy.filters,
    ...(policy.alert_interval === null ? {} : { alert_interval: policy.alert_interval }),
    created: policy.created,
    modified: policy.modified,
  };
}

const quote = (values: readonly string[]) => values.map((value) => `"${value}"`).join(', ');
function unique<T>(values: readonly T[], key: (value: T) => string): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const value of values) {
    if (seen.has(key(value))) continue;
    seen.add(key(value));
    out.push(value);
  }
  return out;
}

/**
 * Checks everything beyond the JSON shape; returns the policy with duplicates dropped. The pool and key
 * ids of `kept` (on PUT: the policy's current filters) are accepted even if those pools or keys were
 * deleted since, so a policy can still be edited after one of them is gone.
 */
async function validatePolicy(
  db: Kysely<Database>,
  accountId: string,
  input: PolicyInput,
  networks: readonly string[],
  kept: Policy['filters'] = {},
): Promise<PolicyInput> {
  const type = alertTypeInfo(input.alert_type);
  if (type === undefined) {
    throw fieldError('alert_type', `"${input.alert_type}" is not supported; allowed: ${quote(ALERT_TYPE_NAMES)}`);
  }
  const outFilters: Record<string, string[]> = {};
  for (const [key, values] of Object.entries(input.filters)) {
    if (!type.filters.includes(key)) {
      throw fieldError(`filters.${key}`, `unknown filter for ${type.type}; allowed: ${quote(type.filters)}`);
    }
    if (values.length === 0) {
      throw fieldError(`filters.${key}`, 'must list at least one value; leave the filter out to match everything');
    }
    const allowed = key === 'network' ? networks : type.filterValues?.[key];
    for (const [i, value] of values.entries()) {
      if (allowed !== undefined && !allowed.includes(value)) {
        throw fieldError(`filters.${key}.${i}`, `"${value}" is not allowed; allowed values: ${quote(allowed)}`);
      }
    }
    outFilters[key] = unique(values, (value) => value);
  }
  const poolIds = outFilters.pool_id;
  if (poolIds !== undefined) {
    const known = await existingPoolIds(db, accountId, poolIds);
    const index = poolIds.findIndex((id) => !known.has(id) && !(kept.pool_id ?? []).includes(id));
    if (index >= 0) {
      throw fieldError(`filters.pool_id.${index}`, `"${poolIds[index]}" is not a pool of this account`);
    }
  }
  const keyIds = outFilters.key_id;
  if (keyIds !== undefined) {
    const known = await gatewayKeyVersions(db, accountId);
    const index = keyIds.findIndex((id) => !known.has(id) && !(kept.key_id ?? []).includes(id));
    if (index >= 0) {
      throw fieldError(`filters.key_id.${index}`, `"${keyIds[index]}" is not a gateway key of this account`);
    }
  }

  const outMechanisms: PolicyInput['mechanisms'] = {};
  for (const key of Object.keys(input.mechanisms)) {
    if (!MECHANISM_KEYS.includes(key)) {
      throw fieldError(`mechanisms.${key}`, `unsupported mechanism; allowed: ${quote(MECHANISM_KEYS)}`);
    }
  }
  const emails = input.mechanisms.email ?? [];
  for (const [i, { id }] of emails.entries()) {
    if (!isEmailAddress(id)) throw fieldError(`mechanisms.email.${i}.id`, `"${id}" is not a valid email address`);
  }
  const hooks = input.mechanisms.webhooks ?? [];
  const knownHooks = await existingDestinationIds(
    db,
    accountId,
    hooks.map((hook) => hook.id),
  );
  for (const [i, { id }] of hooks.entries()) {
    if (!knownHooks.has(id)) {
      throw fieldError(`mechanisms.webhooks.${i}.id`, `"${id}" is not a webhook destination of this account`);
    }
  }
  if (emails.length > 0) outMechanisms.email = unique(emails, (e) => e.id.toLowerCase()).map(({ id }) => ({ id }));
  if (hooks.length > 0) outMechanisms.webhooks = unique(hooks, (h) => h.id).map(({ id }) => ({ id }));
  if (emails.length + hooks.length === 0) {
    throw fieldError(
      'mechanisms',
      'give at least one target: {"email": [{"id": "<address>"}]} or {"webhooks": [{"id": "<destination id>"}]}',
    );
  }
  return { ...input, filters: outFilters, mechanisms: outMechanisms };
}

function notFound(id: string): SwitchyardError {
  return objectNotFound('notification policy', id);
}

export function policyRoutes(deps: ApiDeps): Route[] {
  return [
    listPoliciesRoute(deps),
    createPolicyRoute(deps),
    getPolicyRoute(deps),
    updatePolicyRoute(deps),
    deletePolicyRoute(deps),
  ];
}

const policyId = (params: Readonly<Record<string, string>>) => params.policy_id as string;

/** The `network` filter takes configured networks that are not retired (retired_on not yet reached). */
function liveNetworks({ config, clock }: ApiDeps): string[] {
  return liveNetworkNames(config.networks, clock.now());
}

function listPoliciesRoute({ store }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: BASE,
    auth: 'read',
    summary: 'List notification policies (oldest first; every one, up to 1000, unless per_page is given)',
    tag: TAG,
    query: paginationQuery,
    result: z.array(policyResult),
    paginated: true,
    async handler({ params, query }) {
      return listPage(
        parsePagination(query, { defaultPerPage: MAX_PER_PAGE }),
        () => countPolicies(store.db, accountParam(params)),
        (limit, offset) => listPolicies(store.db, accountParam(params), limit, offset),
        view,
      );
    },
  });
}

function createPolicyRoute(deps: ApiDeps): Route {
  return defineRoute({
    method: 'POST',
    path: BASE,
    auth: 'write',
    summary: 'Create a notification policy',
    tag: TAG,
    body: createBody,
    result: idResult,
    async handler({ params, body }) {
      const db = deps.store.db;
      const account = accountParam(params);
      const fields = {
        name: body.name,
        description: body.description ?? '',
        enabled: body.enabled,
        alert_type: body.alert_type,
        mechanisms: body.mechanisms,
        filters: body.filters ?? {},
        alert_interval: body.alert_interval ?? null,
      };
      const input = await validatePolicy(db, account, fields, liveNetworks(deps));
      const id = randomUUID();
      await insertPolicy(db, account, id, input, timestamp(deps.clock));
      return { result: { id } };
    },
  });
}

function getPolicyRoute({ store }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/:policy_id`,
    auth: 'read',
    summary: 'Get a notification policy',
    tag: TAG,
    result: policyResult,
    async handler({ params }) {
      const policy = await getPolicy(store.db, accountParam(params), policyId(params));
      if (policy === undefined) throw notFound(policyId(params));
      return { result: view(policy) };
    },
  });
}

function updatePolicyRoute(deps: ApiDeps): Route {
  return defineRoute({
    method: 'PUT',
    path: `${BASE}/:policy_id`,
    auth: 'write',
    summary: 'Change the named fields of a notification policy',
    tag: TAG,
    body: updateBody,
    result: idResult,
    async handler({ params, body }) {
      const db = deps.store.db;
      const account = accountParam(params);
      const current = await getPolicy(db, account, policyId(params));
      if (current === undefined) throw notFound(policyId(params));
      const fields = {
        name: body.name ?? current.name,
        description: body.description ?? current.description,
        enabled: body.enabled ?? current.enabled,
        alert_type: body.alert_type ?? current.alert_type,
        mechanisms: body.mechanisms ?? current.mechanisms,
        filters: body.filters ?? current.filters,
        alert_interval: body.alert_interval === undefined ? current.alert_interval : body.alert_interval,
      };
      const input = await validatePolicy(db, account, fields, liveNetworks(deps), current.filters);
      if (!(await updatePolicy(db, account, policyId(params), input, timestamp(deps.clock)))) {
        throw notFound(policyId(params));
      }
      return { result: { id: policyId(params) } };
    },
  });
}

function deletePolicyRoute({ store }: ApiDeps): Route {
  return defineRoute({
    method: 'DELETE',
    path: `${BASE}/:policy_id`,
    auth: 'write',
    summary: 'Delete a notification policy (alerts already queued are still delivered)',
    tag: TAG,
    result: z.null(),
    async handler({ params }) {
      if (!(await deletePolicy(store.db, accountParam(params), policyId(params)))) throw notFound(policyId(params));
      return { result: null };
    },
  });
}
