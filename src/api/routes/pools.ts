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
 * Every write calls `deps.poolsChanged()` after it commits, so routing sees it at once. A write to a pool
 * the config file owns (`pools_from_file: apply`) says in `messages` that the file will overwrite it
 * (file-owned.ts).
 * The list answers from a memo of decoded pools and their cached JSON (pools/pool-rows.ts,
 * schemas/pool-view.ts), both valid only while the row's columns (`version` included) are unchanged;
 * health and networks are read on every request.
 */
import { z } from 'zod';
import { enforceAccountLimits } from '../../accounts/limits.js';
import { SwitchyardError } from '../../errors/base.js';
import { getMonitor } from '../../health/monitor-queries.js';
import type { Pool } from '../../model/pool.js';
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
import { fileOwnedMessages } from '../file-owned.js';
import { paginationQuery, parsePagination, resultInfo } from '../pagination.js';
import { accountParam, objectIdParam, objectNotFound } from '../path-params.js';
import { allowedTargets, keepNetworkName, networksOf, quoted } from '../pool-rules.js';
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

export function poolRoutes(deps: ApiDeps): Route[] {
  const c = poolContext(deps);
  return [
    listPoolsRoute(c),
    bulkPatchPoolsRoute(c),
    createPoolRoute(c),
    getPoolRoute(c),
    replacePoolRoute(c),
    patchPoolRoute(c),
    deletePoolRoute(c),
    poolHealthRoute(c),
    poolReferencesRoute(c),
  ];
}

/** What the pool routes share: the deps, the list's memos, and the steps of a write. */
interface PoolContext {
  deps: ApiDeps;
  db: ApiDeps['store']['db'];
  view(pool: Pool): unknown;
  /** The list decodes, masks and serialises a pool once while its row is unchanged (schemas/pool-view.ts). */
  decoded: DecodedPoolMemo;
  listJson: PoolJsonCache;
  /** A row that cannot be decoded is left out of a page (and logged), so one bad row never fails a list. */
  onCorrupt: OnCorruptPool;
  /** The per-account limits (accounts/limits.ts), checked inside the write's transaction. */
  withinLimits(accountId: string, id: string | undefined): PoolWriteGuard;
}

function poolContext(deps: ApiDeps): PoolContext {
  const { config } = deps;
  return {
    deps,
    db: deps.store.db,
    view: (pool) => poolView(pool, deps.health, networksOf(config, pool)),
    decoded: new DecodedPoolMemo(),
    listJson: new PoolJsonCache(),
    onCorrupt: (corrupt) =>
      deps.logger.error('pools: leaving out a pool whose stored settings cannot be read', corrupt),
    withinLimits: (accountId, id) => (trx, next, current) =>
      enforceAccountLimits(trx, accountId, config.limits, { pool: { id, fields: next, current } }),
  };
}

const poolId = (params: Readonly<Record<string, string>>) => objectIdParam(params, 'pool_id', 'pool', ID_PATTERN);
const notFound = (id: string) => objectNotFound('pool', id);

/** The stored pool the path names, or 404. */
async function namedPool(c: PoolContext, params: Readonly<Record<string, string>>): Promise<Pool> {
  const pool = await getPool(c.db, c.deps.secrets, accountParam(params), poolId(params));
  if (pool === undefined) throw notFound(poolId(params));
  return pool;
}

/**
 * PUT and PATCH: the new fields from the stored pool, with the network name kept, the origins checked
 * against the outbound policy when the body names them, and the limits checked in the transaction.
 */
async function changePool(
  c: PoolContext,
  params: Readonly<Record<string, string>>,
  next: (current: Pool) => PoolFields,
  checkOrigins: boolean,
) {
  const { store, secrets, clock, config, outbound } = c.deps;
  const account = accountParam(params);
  const pool = await updatePool(
    c.db,
    secrets,
    store.dialect,
    clock,
    account,
    poolId(params),
    (current) => {
      const fields = next(current);
      const checked = checkOrigins ? allowedTargets(outbound, account, fields) : fields;
      return keepNetworkName(config, current, checked);
    },
    c.withinLimits(account, poolId(params)),
  );
  if (pool === undefined) throw notFound(poolId(params));
  await c.deps.poolsChanged();
  return { result: c.view(pool), messages: fileOwnedMessages(c.deps.config, [pool]) };
}

function listPoolsRoute(c: PoolContext): Route {
  return defineRoute({
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
      const { store, config, health } = c.deps;
      const { pools, total } = await listPools(c.db, c.deps.secrets, store.dialect, accountParam(params), page, {
        monitor,
        onCorrupt: c.onCorrupt,
        memo: c.decoded,
      });
      const result = new JsonText(c.listJson.list(pools, health, (pool) => networksOf(config, pool)));
      return { result, result_info: resultInfo(page, pools.length, total) };
    },
  });
}

function bulkPatchPoolsRoute(c: PoolContext): Route {
  return defineRoute({
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
      const { store, secrets, clock } = c.deps;
      const account = accountParam(params);
      const { pools, total } = await clearNotificationEmailPage(
        c.db,
        secrets,
        store.dialect,
        clock,
        account,
        page,
        c.onCorrupt,
      );
      await c.deps.poolsChanged();
      return {
        result: pools.map(c.view),
        result_info: resultInfo(page, pools.length, total),
        messages: fileOwnedMessages(c.deps.config, pools),
      };
    },
  });
}

function createPoolRoute(c: PoolContext): Route {
  return defineRoute({
    method: 'POST',
    path: BASE,
    auth: 'write',
    summary: 'Create a pool',
    tag: TAG,
    body: poolBody,
    result: poolResult,
    async handler({ params, body }) {
      const account = accountParam(params);
      const fields = allowedTargets(c.deps.outbound, account, poolFieldsFromBody(body, undefined));
      const pool = await createPool(
        c.db,
        c.deps.secrets,
        c.deps.clock,
        account,
        fields,
        c.withinLimits(account, undefined),
      );
      await c.deps.poolsChanged();
      return { result: c.view(pool) };
    },
  });
}

function getPoolRoute(c: PoolContext): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/:pool_id`,
    auth: 'read',
    summary: 'Get a pool',
    tag: TAG,
    result: poolResult,
    async handler({ params }) {
      return { result: c.view(await namedPool(c, params)) };
    },
  });
}

function replacePoolRoute(c: PoolContext): Route {
  return defineRoute({
    method: 'PUT',
    path: `${BASE}/:pool_id`,
    auth: 'write',
    summary: 'Replace a pool (omitted optional fields take their defaults)',
    tag: TAG,
    body: poolBody,
    result: poolResult,
    async handler({ params, body }) {
      return changePool(c, params, (current) => poolFieldsFromBody(body, current), true);
    },
  });
}

function patchPoolRoute(c: PoolContext): Route {
  return defineRoute({
    method: 'PATCH',
    path: `${BASE}/:pool_id`,
    auth: 'write',
    summary: 'Change the named fields of a pool',
    tag: TAG,
    body: poolPatchBody,
    result: poolResult,
    async handler({ params, body }) {
      const next = (current: Pool) => applyPoolBody(poolFields(current), body, current);
      return changePool(c, params, next, body.origins !== undefined);
    },
  });
}

function deletePoolRoute(c: PoolContext): Route {
  return defineRoute({
    method: 'DELETE',
    path: `${BASE}/:pool_id`,
    auth: 'write',
    summary: 'Delete a pool (refused while a configured network routes to it)',
    tag: TAG,
    result: z.object({ id: z.string() }),
    async handler({ params }) {
      let gone: Pick<Pool, 'account_id' | 'name'> | undefined;
      const deleted = await deletePool(c.db, accountParam(params), poolId(params), (pool) => {
        gone = pool;
        const networks = networksOf(c.deps.config, pool);
        if (networks.length > 0) {
          throw new SwitchyardError(
            'API_IN_USE',
            `pool "${pool.name}" is used by network ${quoted(networks)}; remove it from networks.${networks[0]}.pools in the config first`,
            { details: { networks } },
          );
        }
      });
      if (!deleted) throw notFound(poolId(params));
      await c.deps.poolsChanged();
      return {
        result: { id: poolId(params) },
        messages: fileOwnedMessages(c.deps.config, gone === undefined ? [] : [gone]),
      };
    },
  });
}

function poolHealthRoute(c: PoolContext): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/:pool_id/health`,
    auth: 'read',
    summary: 'Live health of the pool and each origin',
    tag: TAG,
    result: z.object({ pool_id: z.string(), pop_health: z.record(z.string(), z.unknown()) }),
    async handler({ params }) {
      return { result: c.deps.health.report(await namedPool(c, params)) };
    },
  });
}

function poolReferencesRoute(c: PoolContext): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/:pool_id/references`,
    auth: 'read',
    summary: 'What the pool refers to (its monitor) and what refers to it (networks)',
    tag: TAG,
    result: referenceResult,
    async handler({ params }) {
      const pool = await namedPool(c, params);
      const references: z.infer<typeof referenceResult> = [];
      if (pool.monitor !== null) {
        const monitor = await getMonitor(c.db, c.deps.secrets, accountParam(params), pool.monitor);
        references.push({
          reference_type: 'referral',
          resource_id: pool.monitor,
          resource_name: monitor?.description || pool.monitor,
          resource_type: 'monitor',
        });
      }
      for (const network of networksOf(c.deps.config, pool)) {
        references.push({
          reference_type: 'referrer',
          resource_id: network,
          resource_name: network,
          resource_type: 'network',
        });
      }
      return { result: references };
    },
  });
}
