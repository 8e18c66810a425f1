/**
 * Chain incidents (SPEC §14): `GET /accounts/:account_id/gateway/incidents` (our extension) — the open and
 * recent head stalls, origin divergences, reorgs and finality stalls that concern the account (it had a
 * pool of the network when the incident began), newest first. Query: `status` (`open` | `closed`),
 * `network`, pagination (default 25 per page, at most 1000). Closed incidents are kept until
 * `notification_retention` prunes them (open ones always).
 *
 * Each item is what the account's alerts say (incidents/account-view.ts): `data` (and `end_data` once
 * closed) with only the account's own pools in `pool_ids` and only its own origins in a divergence,
 * `summary` = the START alert's text, and `pools` naming those pools (`name` null for a pool deleted
 * since). Any token of the account may read it; no other account's incidents are listed.
 */
import { z } from 'zod';
import { networkName } from '../../config/schema.js';
import { accountShare, dataForAccount } from '../../incidents/account-view.js';
import { countAccountIncidents, type IncidentListFilter, listAccountIncidents } from '../../incidents/list-queries.js';
import { INCIDENT_ALERT_TYPES, type IncidentRecord } from '../../incidents/types.js';
import { incidentSummary } from '../../notifications/incident-messages.js';
import { poolNamesOf } from '../../pools/pool-queries.js';
import type { ApiDeps } from '../deps.js';
import { listPage, paginationQuery, parsePagination } from '../pagination.js';
import { accountParam } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
import { fieldError } from '../validate.js';

const incidentData = z.object({
  network: z.string(),
  kind: z.string(),
  origins: z.array(z.string()).optional(),
  pool_ids: z.array(z.string()).optional(),
  block_number: z.number().int().optional(),
  hashes: z.record(z.string(), z.string()).optional(),
  depth: z.number().int().optional(),
  method: z.string().optional(),
  check: z.string().optional(),
  reason: z.string().optional(),
  block_hash: z.string().optional(),
  since: z.string().optional(),
});

const incidentResult = z.object({
  id: z.string().describe('the alerts’ alert_correlation_id'),
  network: z.string(),
  kind: z.enum(['head_stall', 'origin_divergence', 'reorg', 'finality_stall', 'origin_integrity']),
  alert_type: z.string(),
  status: z.enum(['open', 'closed']),
  opened_at: z.string(),
  closed_at: z.string().nullable(),
  summary: z.string(),
  data: incidentData.describe('the START alert’s data'),
  end_data: incidentData.nullable().describe('the END alert’s data; null while open and for a reorg'),
  pools: z.array(z.object({ id: z.string(), name: z.string().nullable() })),
});

type IncidentView = z.infer<typeof incidentResult>;

function filterOf(query: URLSearchParams): IncidentListFilter {
  const status = query.get('status');
  if (status !== null && status !== 'open' && status !== 'closed') {
    throw fieldError('status', `"${status.slice(0, 20)}" must be open or closed`);
  }
  const network = query.get('network');
  if (network !== null && !networkName.safeParse(network).success) {
    throw fieldError('network', `"${network.slice(0, 70)}" is not a network name (lowercase letters, digits, "-")`);
  }
  return { status: status ?? undefined, network: network ?? undefined };
}

function incidentView(record: IncidentRecord, accountId: string, poolNames: ReadonlyMap<string, string>): IncidentView {
  const share = accountShare(record.scope, accountId);
  const data = dataForAccount(record.data, share);
  return {
    id: record.id,
    network: record.network,
    kind: record.kind,
    alert_type: INCIDENT_ALERT_TYPES[record.kind],
    status: record.status,
    opened_at: record.opened_at,
    closed_at: record.closed_at ?? null,
    summary: incidentSummary({
      accountId,
      correlationId: record.id,
      alertEvent: 'ALERT_STATE_EVENT_START',
      data,
      at: record.opened_at,
    }),
    data,
    end_data: record.end_data === undefined ? null : dataForAccount(record.end_data, share),
    pools: share.poolIds.map((id) => ({ id, name: poolNames.get(id) ?? null })),
  };
}

export function gatewayIncidentRoutes(deps: Pick<ApiDeps, 'store'>): Route[] {
  const db = deps.store.db;
  return [
    defineRoute({
      method: 'GET',
      path: '/accounts/:account_id/gateway/incidents',
      auth: 'read',
      summary: 'List chain incidents (head stall, divergence, reorg, finality stall) of the account, newest first',
      tag: 'gateway incidents',
      query: paginationQuery.extend({
        status: z.enum(['open', 'closed']).optional().describe('Only open, or only closed, incidents.'),
        network: z.string().optional().describe('Only incidents of this network.'),
      }),
      result: z.array(incidentResult),
      paginated: true,
      async handler({ params, query }) {
        const page = parsePagination(query);
        const filter = filterOf(query);
        const accountId = accountParam(params);
        const names = new Map((await poolNamesOf(db, accountId)).map((pool) => [pool.id, pool.name]));
        return listPage(
          page,
          () => countAccountIncidents(db, accountId, filter),
          (limit, offset) => listAccountIncidents(db, accountId, filter, limit, offset),
          (record) => incidentView(record, accountId, names),
        );
      },
    }),
  ];
}
