/**
 * The configured networks: `GET /accounts/:account_id/gateway/networks` (our extension; the console groups
 * pools by it). One item per network of the config's `networks`, in the file's order, with its lifecycle
 * (`status` `retired` from `retired_on`, 00:00 UTC, by the injected clock — the gateway's 410 rule) and
 * its pools in failover order (`networks.{name}.pools`), each with the pool's id, `enabled` and live
 * `healthy` as the pools API shows them, or nulls when no pool of that name exists yet (the network
 * skips it).
 *
 * Any token of the account may read it (read-only too). Network names, chain ids and lifecycles are what
 * the gateway tells anyone; pools are the caller's own: only the routing account (config `account_id`)
 * has pools on networks, so for any other account every `pools` list is empty. Every network, up to 1000,
 * unless `per_page` is given. The config is read at each request, so a reload shows at once.
 */
import { z } from 'zod';
import type { Config, NetworkConfig } from '../../config/schema.js';
import type { Pool } from '../../model/pool.js';
import { liveNetworkNames } from '../../notifications/alert-types.js';
import { poolsNamed } from '../../pools/pool-queries.js';
import type { ApiDeps } from '../deps.js';
import { MAX_PER_PAGE, paginationQuery, parsePagination, resultInfo } from '../pagination.js';
import { accountParam } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';

const networkPool = z.object({
  name: z.string(),
  id: z.string().nullable().describe('null: no pool of this name exists yet'),
  enabled: z.boolean().nullable(),
  healthy: z.boolean().nullable().describe('live, as the pool object’s healthy'),
});

const networkResult = z.object({
  name: z.string(),
  chain_id: z.number().int(),
  status: z.enum(['supported', 'retired']),
  retired_on: z.string().nullable().describe('YYYY-MM-DD; a supported network with a date is deprecated'),
  replacement: z.string().nullable().describe('the successor network'),
  pools: z.array(networkPool).describe('failover order; empty for accounts other than the routing account'),
});

type NetworkView = z.infer<typeof networkResult>;

function networkView(
  name: string,
  network: NetworkConfig,
  live: ReadonlySet<string>,
  pools: ReadonlyMap<string, Pool> | undefined,
  deps: Pick<ApiDeps, 'health'>,
): NetworkView {
  return {
    name,
    chain_id: network.chain_id,
    status: live.has(name) ? 'supported' : 'retired',
    retired_on: network.retired_on ?? null,
    replacement: network.replacement ?? null,
    pools:
      pools === undefined
        ? []
        : network.pools.map((poolName) => {
            const pool = pools.get(poolName);
            return pool === undefined
              ? { name: poolName, id: null, enabled: null, healthy: null }
              : { name: poolName, id: pool.id, enabled: pool.enabled, healthy: deps.health.poolHealthy(pool) };
          }),
  };
}

export function gatewayNetworkRoutes(
  deps: Pick<ApiDeps, 'store' | 'secrets' | 'config' | 'clock' | 'health' | 'logger'>,
): Route[] {
  const { store, clock, logger } = deps;
  return [
    defineRoute({
      method: 'GET',
      path: '/accounts/:account_id/gateway/networks',
      auth: 'read',
      summary: 'List the configured networks: lifecycle, successor, pools in failover order with live health',
      tag: 'gateway networks',
      query: paginationQuery,
      result: z.array(networkResult),
      paginated: true,
      async handler({ params, query }) {
        const page = parsePagination(query, { defaultPerPage: MAX_PER_PAGE });
        const accountId = accountParam(params);
        const config: Readonly<Config> = deps.config;
        const shown = Object.entries(config.networks).slice(page.offset, page.offset + page.limit);
        let pools: Map<string, Pool> | undefined;
        if (accountId === config.account_id) {
          const named = await poolsNamed(
            store.db,
            deps.secrets,
            accountId,
            shown.flatMap(([, network]) => network.pools),
            (corrupt) => logger.error('networks: leaving out a pool whose stored settings cannot be read', corrupt),
          );
          pools = new Map(named.map((pool) => [pool.name, pool]));
        }
        const live = new Set(liveNetworkNames(config.networks, clock.now()));
        const result = shown.map(([name, network]) => networkView(name, network, live, pools, deps));
        return { result, result_info: resultInfo(page, result.length, Object.keys(config.networks).length) };
      },
    }),
  ];
}
