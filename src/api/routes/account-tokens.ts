/**
 * Account API tokens: `/accounts/:account_id/tokens` — Cloudflare's account-owned tokens as the official
 * SDK calls them (`client.accounts.tokens.*`): list, create, get, update (PUT), delete, verify, roll
 * (`PUT …/{token_id}/value`) and the permission groups.
 *
 * - Reading (list, get, verify, permission groups) needs any token of the account; creating, changing,
 *   rolling and deleting need a read-write token (a token with the "Switchyard Write" group). Another
 *   account's path is 403 before anything is read (auth.ts).
 * - The secret (`value`) is in the create and roll answers only; the store keeps its sha256. A roll
 *   replaces the hash in one statement, so the old value is refused from the next request on.
 * - `status: "disabled"`, a past `expires_on`, a future `not_before` and DELETE all make the token's next
 *   request 401: authentication reads the token row on every request (no cache), in every process that
 *   shares the store.
 * - The list leaves out expired tokens unless `include_expired=true` (Cloudflare's behaviour), orders by
 *   `issued_on` (`direction=asc|desc`, default asc) and pages like every list (page/per_page).
 * - A refused input (400 / 1002 naming the field) changes nothing: everything is checked before the one
 *   write.
 */
import { z } from 'zod';
import { PERMISSION_GROUPS } from '../../accounts/token-permissions.js';
import {
  countTokens,
  createToken,
  deleteToken,
  getToken,
  listTokens,
  rollToken,
  type TokenListFilter,
  updateToken,
} from '../../accounts/tokens.js';
import { SwitchyardError } from '../../errors/base.js';
import { ID_PATTERN } from '../../store/ids.js';
import type { ApiDeps } from '../deps.js';
import { listPage, paginationQuery, parsePagination } from '../pagination.js';
import { accountParam, objectIdParam, objectNotFound } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
import {
  applyLifecycle,
  checkPolicies,
  createdTokenResult,
  permissionGroupResult,
  tokenCreateBody,
  tokenResult,
  tokenRollBody,
  tokenUpdateBody,
  tokenView,
  verifyResult,
  verifyView,
} from '../schemas/tokens.js';

const BASE = '/accounts/:account_id/tokens';
const TAG = 'tokens';

const listQuery = paginationQuery.extend({
  direction: z.enum(['asc', 'desc']).optional().describe('Order by issued_on; default asc.'),
  include_expired: z.enum(['true', 'false']).optional().describe('Include expired tokens; default false.'),
});
const groupQuery = z.object({
  name: z.string().optional().describe('Only the group with exactly this name.'),
  scope: z.string().optional().describe('Only groups with this scope, e.g. com.cloudflare.api.account.'),
});

/** One value of a query parameter checked against its schema; 400 / 1002 naming it otherwise. */
function queryValue<T extends string>(
  query: URLSearchParams,
  name: string,
  schema: z.ZodType<T | undefined>,
): T | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw new SwitchyardError('API_VALIDATION', `${name}: give it once`);
  const parsed = schema.safeParse(values[0]);
  if (!parsed.success) {
    throw new SwitchyardError('API_VALIDATION', `${name}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`);
  }
  return parsed.data;
}

export function accountTokenRoutes(deps: ApiDeps): Route[] {
  return [
    listTokensRoute(deps),
    createTokenRoute(deps),
    verifyTokenRoute(deps),
    permissionGroupsRoute(),
    getTokenRoute(deps),
    updateTokenRoute(deps),
    deleteTokenRoute(deps),
    rollTokenRoute(deps),
  ];
}

const tokenId = (params: Readonly<Record<string, string>>) =>
  objectIdParam(params, 'token_id', 'API token', ID_PATTERN);
const notFound = (id: string) => objectNotFound('API token', id);

function listTokensRoute({ store, clock }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: BASE,
    auth: 'read',
    summary: 'List the account API tokens (never their values)',
    tag: TAG,
    query: listQuery,
    result: z.array(tokenResult),
    paginated: true,
    async handler({ params, query }) {
      const page = parsePagination(query);
      const direction = queryValue(query, 'direction', listQuery.shape.direction);
      const includeExpired = queryValue(query, 'include_expired', listQuery.shape.include_expired) === 'true';
      const now = clock.now();
      const filter: TokenListFilter = {
        direction: direction ?? 'asc',
        ...(includeExpired ? {} : { unexpiredAt: new Date(now).toISOString() }),
      };
      return listPage(
        page,
        () => countTokens(store.db, accountParam(params), filter),
        (limit, offset) => listTokens(store.db, accountParam(params), limit, offset, filter),
        (token) => tokenView(token, now),
      );
    },
  });
}

function createTokenRoute({ store, clock }: ApiDeps): Route {
  return defineRoute({
    method: 'POST',
    path: BASE,
    auth: 'write',
    summary: 'Create an account API token (the answer holds its value, shown once)',
    tag: TAG,
    body: tokenCreateBody,
    result: createdTokenResult,
    async handler({ params, body }) {
      const account = accountParam(params);
      const policies = checkPolicies(body.policies, account);
      const now = clock.now();
      const lifecycle = applyLifecycle(body, { status: 'active', expires_on: null, not_before: null }, now);
      const created = await createToken(store.db, clock, {
        accountId: account,
        name: body.name,
        policies,
        ...lifecycle,
      });
      return { result: { ...tokenView(created, now), value: created.token } };
    },
  });
}

function verifyTokenRoute({ store, clock }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/verify`,
    auth: 'read',
    summary: 'Verify the calling token (its id, status and validity window)',
    tag: TAG,
    result: verifyResult,
    async handler({ params, caller }) {
      const token = await getToken(store.db, accountParam(params), caller?.tokenId ?? '');
      // Authentication just read this token; gone now means it was deleted in between.
      if (token === undefined) {
        throw new SwitchyardError('API_AUTH_INVALID', 'Authentication error: the API token is unknown or revoked');
      }
      return { result: verifyView(token, clock.now()) };
    },
  });
}

function permissionGroupsRoute(): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/permission_groups`,
    auth: 'read',
    summary: 'List the permission groups a token policy may grant (fixed ids)',
    tag: TAG,
    query: groupQuery,
    result: z.array(permissionGroupResult),
    async handler({ query }) {
      const name = queryValue(query, 'name', groupQuery.shape.name);
      const scope = queryValue(query, 'scope', groupQuery.shape.scope);
      const groups = PERMISSION_GROUPS.filter(
        (group) =>
          (name === undefined || group.name === name) &&
          (scope === undefined || (group.scopes as readonly string[]).includes(scope)),
      );
      return { result: groups.map((group) => ({ ...group, scopes: [...group.scopes] })) };
    },
  });
}

function getTokenRoute({ store, clock }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/:token_id`,
    auth: 'read',
    summary: 'Get an account API token (never its value)',
    tag: TAG,
    result: tokenResult,
    async handler({ params }) {
      const id = tokenId(params);
      const token = await getToken(store.db, accountParam(params), id);
      if (token === undefined) throw notFound(id);
      return { result: tokenView(token, clock.now()) };
    },
  });
}

function updateTokenRoute({ store, clock }: ApiDeps): Route {
  return defineRoute({
    method: 'PUT',
    path: `${BASE}/:token_id`,
    auth: 'write',
    summary: 'Change an account API token: name, policies, status, expires_on, not_before',
    tag: TAG,
    body: tokenUpdateBody,
    result: tokenResult,
    async handler({ params, body }) {
      const db = store.db;
      const account = accountParam(params);
      const id = tokenId(params);
      const current = await getToken(db, account, id);
      if (current === undefined) throw notFound(id);
      const policies = body.policies === undefined ? current.policies : checkPolicies(body.policies, account);
      const lifecycle = applyLifecycle(body, current, clock.now());
      const next = { name: body.name ?? current.name, policies, ...lifecycle };
      if (!(await updateToken(db, clock, account, id, next))) throw notFound(id);
      const updated = await getToken(db, account, id);
      if (updated === undefined) throw notFound(id);
      return { result: tokenView(updated, clock.now()) };
    },
  });
}

function deleteTokenRoute({ store }: ApiDeps): Route {
  return defineRoute({
    method: 'DELETE',
    path: `${BASE}/:token_id`,
    auth: 'write',
    summary: 'Delete an account API token (refused from its next request on)',
    tag: TAG,
    result: z.object({ id: z.string() }),
    async handler({ params }) {
      const id = tokenId(params);
      if (!(await deleteToken(store.db, accountParam(params), id))) throw notFound(id);
      return { result: { id } };
    },
  });
}

function rollTokenRoute({ store, clock }: ApiDeps): Route {
  return defineRoute({
    method: 'PUT',
    path: `${BASE}/:token_id/value`,
    auth: 'write',
    summary: 'Roll an account API token: the answer is the new value; the old one stops working at once',
    tag: TAG,
    body: tokenRollBody,
    result: z.string(),
    async handler({ params }) {
      const id = tokenId(params);
      const value = await rollToken(store.db, clock, accountParam(params), id);
      if (value === undefined) throw notFound(id);
      return { result: value };
    },
  });
}
