/**
 * Gateway keys: `/accounts/:account_id/gateway/keys` (SPEC §11, our extension) — keys clients present
 * to the gateway, as resources of the routing account: list, create, get, PATCH, delete, roll
 * (`PUT …/{key_id}/value`) and usage (`GET …/{key_id}/usage?since=&until=`).
 *
 * - Only the routing account (config `account_id`) has gateway keys: another account's path is 403
 *   (after auth.ts checked that the token belongs to it). Reading needs any token of the account;
 *   every write needs a read-write token.
 * - Create answers 200 with the key and its `value` (`swk_…`), shown once; the store keeps its SHA-256.
 *   Roll answers `result` = the new value (a string); the old one is refused from then on.
 * - Every write awaits `deps.keysChanged()`, so this process's gateway enforces it before the answer;
 *   other processes sharing the store follow within 250 ms + a reload (keys/store-key-directory.ts).
 * - Usage: `[{date, network, requests, errors}]` by date then network, for `since`..`until` (UTC dates,
 *   inclusive; default the last 30 days up to today; at most 366 days). Counted as the gateway counts it
 *   (gateway/rpc/handler.ts): calls admitted past keys, rate limit and quota; errors = those answered
 *   with a JSON-RPC error. Days without calls have no row. Flushed from memory every second.
 */
import { z } from 'zod';
import type { Config } from '../../config/schema.js';
import {
  countGatewayKeys,
  createGatewayKey,
  deleteGatewayKey,
  type GatewayKeyFields,
  type GatewayKeyInfo,
  getGatewayKey,
  listGatewayKeys,
  rollGatewayKey,
  updateGatewayKey,
} from '../../keys/key-queries.js';
import { usageBetween } from '../../keys/usage-queries.js';
import { keyRateLimit } from '../../model/gateway-keys.js';
import { ID_PATTERN } from '../../store/ids.js';
import type { ApiDeps } from '../deps.js';
import { listPage, paginationQuery, parsePagination } from '../pagination.js';
import { objectIdParam, objectNotFound, routingAccountParam } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
import {
  createdKeyResult,
  type KeyBody,
  keyCreateBody,
  keyPatchBody,
  keyResult,
  keyRollBody,
  usageQuery,
  usageResult,
} from '../schemas/gateway-keys.js';
import { fieldError } from '../validate.js';

const BASE = '/accounts/:account_id/gateway/keys';
const TAG = 'gateway keys';
const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 30;
const MAX_DAYS = 366;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function gatewayKeyRoutes(deps: ApiDeps): Route[] {
  return [
    listKeysRoute(deps),
    createKeyRoute(deps),
    getKeyRoute(deps),
    patchKeyRoute(deps),
    deleteKeyRoute(deps),
    rollKeyRoute(deps),
    keyUsageRoute(deps),
  ];
}

/** The path's account, when it is the routing account; 403 otherwise. */
function routingAccount(config: Readonly<Config>, params: Readonly<Record<string, string>>): string {
  return routingAccountParam(
    params,
    config.account_id,
    'Gateway keys belong to the routing account (account_id in the config); this account has none',
  );
}

const keyId = (params: Readonly<Record<string, string>>) => objectIdParam(params, 'key_id', 'Gateway key', ID_PATTERN);
const notFound = (id: string) => objectNotFound('Gateway key', id);

function listKeysRoute({ store, config }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: BASE,
    auth: 'read',
    summary: 'List the gateway keys of the routing account (never their values)',
    tag: TAG,
    query: paginationQuery,
    result: z.array(keyResult),
    paginated: true,
    async handler({ params, query }) {
      const id = routingAccount(config, params);
      const page = parsePagination(query);
      return listPage(
        page,
        () => countGatewayKeys(store.db, id),
        (limit, offset) => listGatewayKeys(store.db, id, limit, offset),
        (key: GatewayKeyInfo) => key,
      );
    },
  });
}

function createKeyRoute(deps: ApiDeps): Route {
  const { store, clock, config } = deps;
  return defineRoute({
    method: 'POST',
    path: BASE,
    auth: 'write',
    summary: 'Create a gateway key (the answer holds its value, shown once)',
    tag: TAG,
    body: keyCreateBody,
    result: createdKeyResult,
    async handler({ params, body }) {
      const id = routingAccount(config, params);
      const defaults: GatewayKeyFields = {
        name: '',
        enabled: true,
        networks: null,
        rate_limit: null,
        daily_quota: null,
      };
      const created = await createGatewayKey(store.db, clock, id, applyKeyBody(config, body, defaults));
      await deps.keysChanged();
      return { result: created };
    },
  });
}

function getKeyRoute({ store, config }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/:key_id`,
    auth: 'read',
    summary: 'Get a gateway key (never its value)',
    tag: TAG,
    result: keyResult,
    async handler({ params }) {
      const key = await getGatewayKey(store.db, routingAccount(config, params), keyId(params));
      if (key === undefined) throw notFound(keyId(params));
      return { result: key };
    },
  });
}

function patchKeyRoute(deps: ApiDeps): Route {
  const { store, clock, config } = deps;
  return defineRoute({
    method: 'PATCH',
    path: `${BASE}/:key_id`,
    auth: 'write',
    summary: 'Change a gateway key: name, enabled, networks, rate_limit, daily_quota',
    tag: TAG,
    body: keyPatchBody,
    result: keyResult,
    async handler({ params, body }) {
      const db = store.db;
      const owner = routingAccount(config, params);
      const id = keyId(params);
      const current = await getGatewayKey(db, owner, id);
      if (current === undefined) throw notFound(id);
      if (!(await updateGatewayKey(db, clock, owner, id, applyKeyBody(config, body, current)))) throw notFound(id);
      await deps.keysChanged();
      const updated = await getGatewayKey(db, owner, id);
      if (updated === undefined) throw notFound(id);
      return { result: updated };
    },
  });
}

function deleteKeyRoute(deps: ApiDeps): Route {
  return defineRoute({
    method: 'DELETE',
    path: `${BASE}/:key_id`,
    auth: 'write',
    summary: 'Delete a gateway key (refused by the gateway from then on; its usage stays readable)',
    tag: TAG,
    result: z.object({ id: z.string() }),
    async handler({ params }) {
      const owner = routingAccount(deps.config, params);
      const id = keyId(params);
      if (!(await deleteGatewayKey(deps.store.db, owner, id))) throw notFound(id);
      await deps.keysChanged();
      return { result: { id } };
    },
  });
}

function rollKeyRoute(deps: ApiDeps): Route {
  return defineRoute({
    method: 'PUT',
    path: `${BASE}/:key_id/value`,
    auth: 'write',
    summary: 'Roll a gateway key: the answer is the new value; the old one is refused from then on',
    tag: TAG,
    body: keyRollBody,
    result: z.string(),
    async handler({ params }) {
      const owner = routingAccount(deps.config, params);
      const id = keyId(params);
      const value = await rollGatewayKey(deps.store.db, deps.clock, owner, id);
      if (value === undefined) throw notFound(id);
      await deps.keysChanged();
      return { result: value };
    },
  });
}

function keyUsageRoute({ store, clock, config }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/:key_id/usage`,
    auth: 'read',
    summary: "A gateway key's calls and errors per UTC day and network (default: the last 30 days)",
    tag: TAG,
    query: usageQuery,
    result: usageResult,
    async handler({ params, query }) {
      const owner = routingAccount(config, params);
      const id = keyId(params);
      const { since, until } = usageWindow(query, clock.now());
      // A deleted key's usage stays in the store, but its id no longer names anything here.
      if ((await getGatewayKey(store.db, owner, id)) === undefined) throw notFound(id);
      return { result: await usageBetween(store.db, id, since, until) };
    },
  });
}

/** The fields after applying `body` to `current` (only the fields the body names change). */
function applyKeyBody(config: Readonly<Config>, body: KeyBody, current: GatewayKeyFields): GatewayKeyFields {
  let networks = body.networks === undefined ? current.networks : body.networks;
  if (body.networks !== undefined && body.networks !== null) {
    body.networks.forEach((name, i) => {
      if (!Object.hasOwn(config.networks, name)) {
        const known = Object.keys(config.networks).sort();
        throw fieldError(
          `networks.${i}`,
          `${JSON.stringify(name)} is not a configured network${known.length === 0 ? '' : ` (configured: ${known.join(', ')})`}`,
        );
      }
    });
    networks = [...new Set(body.networks)];
  }
  const rate = body.rate_limit;
  return {
    name: body.name ?? current.name,
    enabled: body.enabled ?? current.enabled,
    networks: networks === null ? null : [...networks],
    rate_limit: rate === undefined ? current.rate_limit : rate === null ? null : keyRateLimit(rate),
    daily_quota: body.daily_quota === undefined ? current.daily_quota : body.daily_quota,
  };
}

/** `since`..`until` of a usage query (UTC dates), with defaults and bounds; 400 / 1002 naming the parameter. */
function usageWindow(query: URLSearchParams, now: number): { since: string; until: string } {
  const untilMs = dateParam(query, 'until') ?? Date.UTC(...utcParts(now));
  const sinceMs = dateParam(query, 'since') ?? untilMs - (DEFAULT_DAYS - 1) * DAY_MS;
  if (sinceMs > untilMs) throw fieldError('since', 'must be on or before until');
  if ((untilMs - sinceMs) / DAY_MS + 1 > MAX_DAYS)
    throw fieldError('since', `the window may span at most ${MAX_DAYS} days`);
  return { since: isoDate(sinceMs), until: isoDate(untilMs) };
}

/** A date query parameter as ms at 00:00 UTC, or undefined when absent. */
function dateParam(query: URLSearchParams, name: string): number | undefined {
  const values = query.getAll(name);
  if (values.length === 0) return undefined;
  if (values.length > 1) throw fieldError(name, 'give it once');
  const m = DATE.exec(values[0] as string);
  const ms = m === null ? Number.NaN : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (!Number.isFinite(ms) || isoDate(ms) !== values[0]) throw fieldError(name, 'must be a date, YYYY-MM-DD (UTC)');
  return ms;
}

function utcParts(now: number): [number, number, number] {
  const d = new Date(now);
  return [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()];
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
