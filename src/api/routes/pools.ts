/**
 * Pools: `/accounts/:account_id/load_balancers/pools` (seed §4.2–4.3, SPEC §3, CLOUDFLARE-API.md).
 *
 * - list (GET) and bulk update (PATCH) page the same way: ascending name, ties by id, 25 per page by
 *   default (pagination.ts); the bulk update changes exactly the requested page, atomically, and
 *   accepts only `{"notification_email": ""}`.
 * - create / get / put / patch / delete one pool; `…/health` and `…/references`.
 * - A pool a configured network routes to cannot be deleted or renamed (400 naming the network): the
 *   network finds its pools by name and would answer 503 until a pool of that name exists again.
 * - Origin addresses (and `ws_address`, with the ws schemes) go through the account's outbound policy
 *   (outbound/policy.ts) on create, replace, and a PATCH that names `origins`: a refused one is 400 / 1002
 *   naming `origins.N.address` (or `origins.N.ws_address`) and saying "target not allowed" and why;
 *   nothing is saved.
 * Every write calls `deps.poolsChanged()` after it commits, so routing sees it at once.
 * The list answers from a memo of decoded pools and their cached JSON (pools/pool-rows.ts,
 * schemas/pool-view.ts), both valid only while the row's columns (`version` included) are unchanged;
 * health and networks are read on every request.
 */
import { z } from 'zod';
import type { Config } from '../../config/schema.js';
import { SwitchyardError } from '../../errors/base.js';
import { getMonitor } from '../../health/monitor-queries.js';
import { originUrl } from '../../model/origin-address.js';
import type { Pool } from '../../model/pool.js';
import { type OutboundPolicy, type TargetRules, WS_SCHEMES } from '../../outbound/policy.js';
import {
  clearNotificationEmailPage,
  createPool,
  DecodedPoolMemo,
  deletePool,
  getPool,
  listPools,
  type OnCorruptPool,
  type PoolFields,
  type PoolWriteGuard,
  poolFields,
  updatePool,
} from '../../pools/pool-queries.js';
import { ID_PATTERN } from '../../store/ids.js';
import type { ApiDeps } from '../deps.js';
import { JsonText } from '../envelope.js';
import { enforceAccountLimits } from '../limits.js';
import { paginationQuery, parsePagination, resultInfo } from '../pagination.js';
import { accountParam, objectIdParam, objectNotFound } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
import { PoolJsonCache, poolView } from '../schemas/pool-view.js';
import {
  applyPoolBody,
  bulkPatchBody,
  poolBody,
  poolFieldsFromBody,
  poolPatchBody,
  poolResult,
} from '../schemas/pools.js';
import { fieldError } from '../validate.js';

const BASE = '/accounts/:account_id/load_balancers/pools';
const TAG = 'pools';

const referenceResult = z.array(
  z.object({
    reference_type: z.enum(['referral', 'referrer']),
    resource_id: z.string(),
    resource_name: z.string(),
    resource_type: z.enum(['monitor', 'network']),
  }),
);

/** Names of the configured networks that route to this pool (only pools of the routing account). */
export function networksOf(config: Readonly<Config>, pool: Pick<Pool, 'account_id' | 'name'>): string[] {
  if (pool.account_id !== config.account_id) return [];
  return Object.entries(config.networks)
    .filter(([, network]) => network.pools.includes(pool.name))
    .map(([name]) => name)
    .sort();
}

/** A pool a network routes to keeps its name: the network finds it by name (config `networks.*.pools`). */
function keepNetworkName(config: Readonly<Config>, current: Pool, next: PoolFields): PoolFields {
  const networks = networksOf(config, current);
  if (next.name !== current.name && networks.length > 0) {
    throw new SwitchyardError(
      'API_IN_USE',
      `name: pool "${current.name}" is used by network ${quoted(networks)}; it cannot be renamed while the config routes to it by name`,
      { details: { pointer: '/name', networks } },
    );
  }
  return next;
}

/**
 * Refuses origins whose address or ws_address the account's outbound policy refuses (the URL: literal IPs
 * and names; resolved addresses are checked at connect time). `ws_address` is checked with the ws schemes.
 * Unparseable addresses are the schema's to refuse.
 */
function allowedTargets(outbound: OutboundPolicy, accountId: string, fields: PoolFields): PoolFields {
  const rules = outbound.rulesFor(accountId);
  const wsRules = outbound.rulesFor(accountId, { schemes: WS_SCHEMES });
  const refusal = (address: string, targetRules: TargetRules): string | undefined => {
    let url: URL;
    try {
      url = originUrl(address);
    } catch {
      return undefined;
    }
    return outbound.refusal(url, targetRules);
  };
  for (const [i, origin] of fields.origins.entries()) {
    const refused = refusal(origin.address, rules);
    if (refused !== undefined) throw fieldError(`origins.${i}.address`, refused);
    const wsRefused = origin.ws_address === undefined ? undefined : refusal(origin.ws_address, wsRules);
    if (wsRefused !== undefined) throw fieldError(`origins.${i}.ws_address`, wsRefused);
  }
  return fields;
}

function quoted(names: readonly string[]): string {
  return names.map((name) => `"${name}"`).join(', ');
}

export function poolRoutes(deps: ApiDeps): Route[] {
  const { store, secrets, clock, config } = deps;
  const db = store.db;
  const view = (pool: Pool) => poolView(pool, deps.health, networksOf(config, pool));
  // The list decodes, masks and serialises a pool once while its row is unchanged (schemas/pool-view.ts).
  const decoded = new DecodedPoolMemo();
  const listJson = new PoolJsonCache();
  // A row that cannot be decoded is left out of a page (and logged), so one bad row never fails a list.
  const onCorrupt: OnCorruptPool = (corrupt) =>
    deps.logger.error('pools: leaving out a pool whose stored settings cannot be read', corrupt);
  const account = accountParam;
  const poolId = (params: Readonly<Record<string, string>>) => objectIdParam(params, 'pool_id', 'pool', ID_PATTERN);
  const notFound = (id: string) => objectNotFound('pool', id);
  /** The per-account limits (api/limits.ts), checked inside the write's transaction. */
  const withinLimits =
    (accountId: string, id: string | undefined): PoolWriteGuard =>
    (trx, next, current) =>
      enforceAccountLimits(trx, accountId, config.limits, { pool: { id, fields: next, current } });
  /**
   * PUT and PATCH: the new fields from the stored pool, with the network name kept, the origins checked
   * against the outbound policy when the body names them, and the limits checked in the transaction.
   */
  const change = async (
    params: Readonly<Record<string, string>>,
    next: (current: Pool) => PoolFields,
    checkOrigins: boolean,
  ) => {
    const pool = await updatePool(
      db,
      secrets,
      store.dialect,
      clock,
      account(params),
      poolId(params),
      (current) => {
        const fields = next(current);
        const checked = checkOrigins ? allowedTargets(deps.outbound, account(params), fields) : fields;
        return keepNetworkName(config, current, checked);
      },
      withinLimits(account(params), poolId(params)),
    );
    if (pool === undefined) throw notFound(poolId(params));
    await deps.poolsChanged();
    return { result: view(pool) };
  };

  return [
    defineRoute({
      method: 'GET',
      path: BASE,
      auth: 'read',
      summary: 'List pools (ordered by name, then id; 25 per page by default)',
      tag: TAG,
      query: paginationQuery.extend({ monitor: z.string().optional().describe('Only pools using this monitor id.') }),
      result: z.array(poolResult),
      paginated: true,
      async handler({ params, query }) {
        const page = parsePagination(query);
        const monitor = query.get('monitor') ?? undefined;
        // A value that is not a monitor id matches no pool (and never reaches the database as is).
        if (monitor !== undefined && !ID_PATTERN.test(monitor))
          return { result: [], result_info: resultInfo(page, 0, 0) };
        const { pools, total } = await listPools(db, secrets, store.dialect, account(params), page, {
          monitor,
          onCorrupt,
          memo: decoded,
        });
        const result = new JsonText(listJson.list(pools, deps.health, (pool) => networksOf(config, pool)));
        return { result, result_info: resultInfo(page, pools.length, total) };
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: BASE,
      auth: 'write',
      summary: 'Clear notification_email on the pools of one page (only {"notification_email": ""})',
      tag: TAG,
      query: paginationQuery,
      body: bulkPatchBody,
      result: z.array(poolResult),
      paginated: true,
      async handler({ params, query }) {
        const page = parsePagination(query);
        const { pools, total } = await clearNotificationEmailPage(
          db,
          secrets,
          store.dialect,
          clock,
          account(params),
          page,
          onCorrupt,
        );
        await deps.poolsChanged();
        return { result: pools.map(view), result_info: resultInfo(page, pools.length, total) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: BASE,
      auth: 'write',
      summary: 'Create a pool',
      tag: TAG,
      body: poolBody,
      result: poolResult,
      async handler({ params, body }) {
        const pool = await createPool(
          db,
          secrets,
          clock,
          account(params),
          allowedTargets(deps.outbound, account(params), poolFieldsFromBody(body, undefined)),
          withinLimits(account(params), undefined),
        );
        await deps.poolsChanged();
        return { result: view(pool) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${BASE}/:pool_id`,
      auth: 'read',
      summary: 'Get a pool',
      tag: TAG,
      result: poolResult,
      async handler({ params }) {
        const pool = await getPool(db, secrets, account(params), poolId(params));
        if (pool === undefined) throw notFound(poolId(params));
        return { result: view(pool) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${BASE}/:pool_id`,
      auth: 'write',
      summary: 'Replace a pool (omitted optional fields take their defaults)',
      tag: TAG,
      body: poolBody,
      result: poolResult,
      async handler({ params, body }) {
        return change(params, (current) => poolFieldsFromBody(body, current), true);
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: `${BASE}/:pool_id`,
      auth: 'write',
      summary: 'Change the named fields of a pool',
      tag: TAG,
      body: poolPatchBody,
      result: poolResult,
      async handler({ params, body }) {
        return change(
          params,
          (current) => applyPoolBody(poolFields(current), body, current),
          body.origins !== undefined,
        );
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: `${BASE}/:pool_id`,
      auth: 'write',
      summary: 'Delete a pool (refused while a configured network routes to it)',
      tag: TAG,
      result: z.object({ id: z.string() }),
      async handler({ params }) {
        const deleted = await deletePool(db, account(params), poolId(params), (pool) => {
          const networks = networksOf(config, pool);
          if (networks.length > 0) {
            throw new SwitchyardError(
              'API_IN_USE',
              `pool "${pool.name}" is used by network ${quoted(networks)}; remove it from networks.${networks[0]}.pools in the config first`,
              { details: { networks } },
            );
          }
        });
        if (!deleted) throw notFound(poolId(params));
        await deps.poolsChanged();
        return { result: { id: poolId(params) } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${BASE}/:pool_id/health`,
      auth: 'read',
      summary: 'Live health of the pool and each origin',
      tag: TAG,
      result: z.object({ pool_id: z.string(), pop_health: z.record(z.string(), z.unknown()) }),
      async handler({ params }) {
        const pool = await getPool(db, secrets, account(params), poolId(params));
        if (pool === undefined) throw notFound(poolId(params));
        return { result: deps.health.report(pool) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${BASE}/:pool_id/references`,
      auth: 'read',
      summary: 'What the pool refers to (its monitor) and what refers to it (networks)',
      tag: TAG,
      result: referenceResult,
      async handler({ params }) {
        const pool = await getPool(db, secrets, account(params), poolId(params));
        if (pool === undefined) throw notFound(poolId(params));
        const references: z.infer<typeof referenceResult> = [];
        if (pool.monitor !== null) {
          const monitor = await getMonitor(db, secrets, account(params), pool.monitor);
          references.push({
            reference_type: 'referral',
            resource_id: pool.monitor,
            resource_name: monitor?.description || pool.monitor,
            resource_type: 'monitor',
          });
        }
        for (const network of networksOf(config, pool)) {
          references.push({
            reference_type: 'referrer',
            resource_id: network,
            resource_name: network,
            resource_type: 'network',
          });
        }
        return { result: references };
      },
    }),
  ];
}
