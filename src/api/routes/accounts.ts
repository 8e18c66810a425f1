/**
 * `GET /accounts` — Cloudflare's list of the accounts a token can access (`client.accounts.list()` of the
 * official SDK). A Switchyard token is scoped to exactly one account, so the list holds that one:
 * `{id, name, type: "standard", settings: {enforce_twofactor: false}, created_on}`, paginated like every
 * list (page/per_page; a page past the end is `result: []`). The console signs in with it, so nobody
 * types an account id.
 */
import { z } from 'zod';
import { findAccount } from '../../accounts/accounts.js';
import { SwitchyardError } from '../../errors/base.js';
import type { ApiDeps } from '../deps.js';
import { paginationQuery, parsePagination, resultInfo } from '../pagination.js';
import { defineRoute, type Route } from '../route-table.js';

const accountResult = z.object({
  id: z.string(),
  name: z.string(),
  type: z.literal('standard'),
  settings: z.object({ enforce_twofactor: z.boolean() }),
  created_on: z.string(),
});

export function accountRoutes(deps: Pick<ApiDeps, 'store'>): Route[] {
  const db = deps.store.db;
  return [
    defineRoute({
      method: 'GET',
      path: '/accounts',
      auth: 'read',
      summary: "List the accounts the calling token can access (one: the token's own)",
      tag: 'accounts',
      query: paginationQuery,
      result: z.array(accountResult),
      paginated: true,
      async handler({ caller, query }) {
        const page = parsePagination(query);
        const account = caller === null ? undefined : await findAccount(db, caller.accountId);
        // Authentication just found the token; its account cannot be gone (tokens are deleted with it).
        if (account === undefined) {
          throw new SwitchyardError('API_AUTH_INVALID', 'Authentication error: the API token is unknown or revoked');
        }
        const all = [
          {
            id: account.id,
            name: account.name,
            type: 'standard' as const,
            settings: { enforce_twofactor: false },
            created_on: account.created_on,
          },
        ];
        const result = all.slice(page.offset, page.offset + page.limit);
        return { result, result_info: resultInfo(page, result.length, all.length) };
      },
    }),
  ];
}
