/**
 * The transaction ledger (SPEC §19, our extension): `GET /accounts/:account_id/gateway/transactions` and
 * `GET …/gateway/transactions/{hash}` — every eth_sendRawTransaction an origin accepted through the
 * gateway, with its status and the history of its states.
 *
 * - Only the routing account (config `account_id`) sends through the gateway: another account's path is
 *   403 (after auth.ts checked that the token belongs to it), as for gateway keys. Any token of the
 *   account can read.
 * - Filters (each at most once; anything else, or a value outside its set, is 400 / 1002 naming it):
 *   `network` (a configured network), `status` (pending, included, final, replaced, dropped), `key_id`
 *   (32 lowercase hex), `from` (an address, any case), `since` (RFC 3339: first seen at or after it).
 * - Paginated exactly like pools (api/pagination.ts: `page`/`per_page` or `limit`/`offset`, 25 by default,
 *   at most 1000); newest first (`first_seen`, then network and hash). A page past the end is `[]`.
 * - One record: the hash (0x + 64 hex, any case) is 404 / 7003 when no record of this account has it.
 */
import { z } from 'zod';
import { countRecords, getRecord, listRecords, type RecordFilter } from '../../ledger/record-queries.js';
import { LEDGER_STATUSES, type LedgerStatus, type TransactionRecord } from '../../ledger/types.js';
import { ID_PATTERN } from '../../store/ids.js';
import type { ApiDeps } from '../deps.js';
import { listPage, paginationQuery, parsePagination } from '../pagination.js';
import { objectIdParam, objectNotFound, routingAccountParam } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
import { fieldError, rfc3339Param } from '../validate.js';

const BASE = '/accounts/:account_id/gateway/transactions';
const TAG = 'transactions';
const HASH = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const FILTERS = ['network', 'status', 'key_id', 'from', 'since'] as const;
const PAGINATION = Object.keys(paginationQuery.shape);

const historyEntry = z.object({
  status: z.enum(['pending', 'included', 'final', 'replaced', 'dropped', 'reorged']),
  at: z.string(),
  block_number: z.number().optional(),
  block_hash: z.string().optional(),
});
export const transactionResult = z.object({
  hash: z.string(),
  network: z.string(),
  from: z.string(),
  nonce: z.number(),
  key_id: z.string().nullable(),
  status: z.enum(['pending', 'included', 'final', 'replaced', 'dropped']),
  block_number: z.number().nullable(),
  block_hash: z.string().nullable(),
  transaction_index: z.number().nullable(),
  replaced_by: z.string().nullable(),
  first_seen: z.string(),
  updated_at: z.string(),
  history: z.array(historyEntry),
});

const listQuery = paginationQuery.extend({
  network: z.string().optional().describe('Only this network (a configured one).'),
  status: z.enum(['pending', 'included', 'final', 'replaced', 'dropped']).optional().describe('Only this status.'),
  key_id: z.string().optional().describe('Only transactions sent with this gateway key.'),
  from: z.string().optional().describe('Only transactions of this sender (0x + 40 hex).'),
  since: z.string().optional().describe('RFC 3339; only transactions first seen at or after it.'),
});

/** The filters of a listing; throws 400 / 1002 naming the parameter for anything out of place. */
function filterOf(query: URLSearchParams, networks: readonly string[]): RecordFilter {
  for (const name of new Set(query.keys())) {
    if (!(FILTERS as readonly string[]).includes(name) && !PAGINATION.includes(name)) {
      throw fieldError(
        'query',
        `unknown parameter ${JSON.stringify(name.slice(0, 40))}; filters are ${FILTERS.join(', ')}, and page/per_page or limit/offset`,
      );
    }
  }
  const one = (name: (typeof FILTERS)[number]): string | undefined => {
    const values = query.getAll(name);
    if (values.length > 1) throw fieldError(name, 'give it once');
    return values[0];
  };
  const filter: RecordFilter = {};
  const network = one('network');
  if (network !== undefined) {
    if (!networks.includes(network))
      throw fieldError('network', `"${network.slice(0, 64)}" is not allowed; allowed values: ${networks.join(', ')}`);
    filter.network = network;
  }
  const status = one('status');
  if (status !== undefined) {
    if (!(LEDGER_STATUSES as readonly string[]).includes(status)) {
      throw fieldError(
        'status',
        `"${status.slice(0, 40)}" is not allowed; allowed values: ${LEDGER_STATUSES.join(', ')}`,
      );
    }
    filter.status = status as LedgerStatus;
  }
  const keyId = one('key_id');
  if (keyId !== undefined) {
    if (!ID_PATTERN.test(keyId)) throw fieldError('key_id', 'must be a gateway key id: 32 lowercase hex characters');
    filter.keyId = keyId;
  }
  const from = one('from');
  if (from !== undefined) {
    if (!ADDRESS.test(from)) throw fieldError('from', 'must be an address: 0x and 40 hex characters');
    filter.from = from.toLowerCase();
  }
  const since = one('since');
  if (since !== undefined) filter.since = rfc3339Param('since', since);
  return filter;
}

export function transactionRoutes(deps: Pick<ApiDeps, 'store' | 'config'>): Route[] {
  return [listTransactionsRoute(deps), getTransactionRoute(deps)];
}

/** The path's account, when it is the routing account; 403 otherwise. */
function routingAccount(config: ApiDeps['config'], params: Readonly<Record<string, string>>): string {
  return routingAccountParam(
    params,
    config.account_id,
    'Transactions are sent through the gateway by the routing account (account_id in the config); this account has none',
  );
}

function listTransactionsRoute({ store, config }: Pick<ApiDeps, 'store' | 'config'>): Route {
  return defineRoute({
    method: 'GET',
    path: BASE,
    auth: 'read',
    summary: 'List the transactions sent through the gateway (newest first), with their history',
    tag: TAG,
    query: listQuery,
    result: z.array(transactionResult),
    paginated: true,
    async handler({ params, query }) {
      const id = routingAccount(config, params);
      const page = parsePagination(query);
      const filter = filterOf(query, Object.keys(config.networks));
      return listPage(
        page,
        () => countRecords(store.db, id, filter),
        (limit, offset) => listRecords(store.db, id, filter, limit, offset),
        (record: TransactionRecord) => record,
      );
    },
  });
}

function getTransactionRoute({ store, config }: Pick<ApiDeps, 'store' | 'config'>): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/:hash`,
    auth: 'read',
    summary: 'Get one transaction sent through the gateway, with the history of its states',
    tag: TAG,
    result: transactionResult,
    async handler({ params }) {
      const id = routingAccount(config, params);
      const hash = objectIdParam(params, 'hash', 'Transaction', HASH).toLowerCase();
      const record = await getRecord(store.db, id, hash);
      if (record === undefined) throw objectNotFound('Transaction', hash);
      return { result: record };
    },
  });
}
