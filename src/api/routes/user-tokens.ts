/**
 * `GET /user/tokens/verify` — answers for any usable token (read-only or read-write) with Cloudflare's
 * shape `{id, status, expires_on?, not_before?}`; a missing, unknown, disabled, expired or not-yet-valid
 * token gets the usual 401 (auth.ts), so `status` here is always "active".
 */

import { getToken } from '../../accounts/tokens.js';
import { SwitchyardError } from '../../errors/base.js';
import type { ApiDeps } from '../deps.js';
import { defineRoute, type Route } from '../route-table.js';
import { verifyResult, verifyView } from '../schemas/tokens.js';

export function userTokenRoutes(deps: Pick<ApiDeps, 'store' | 'clock'>): Route[] {
  const { store, clock } = deps;
  return [
    defineRoute({
      method: 'GET',
      path: '/user/tokens/verify',
      auth: 'read',
      summary: 'Verify the calling API token',
      tag: 'user',
      result: verifyResult,
      async handler({ caller }) {
        const token = caller === null ? undefined : await getToken(store.db, caller.accountId, caller.tokenId);
        // Authentication just read this token; gone now means it was deleted in between.
        if (token === undefined) {
          throw new SwitchyardError('API_AUTH_INVALID', 'Authentication error: the API token is unknown or revoked');
        }
        return { result: verifyView(token, clock.now()) };
      },
    }),
  ];
}
