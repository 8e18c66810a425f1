/**
 * Bearer-token authentication and account scoping for the management API.
 *
 * - No `Authorization` header, or not `Bearer <token>` of a plausible shape → 401 / 10000 (plus a
 *   9106 item when the header is missing altogether, as Cloudflare does).
 * - A well-formed token that is unknown (never made, deleted, or rolled away), disabled, expired or not
 *   yet valid (`not_before`) → 401 / 10000. The token's row is read on every request (no cache), so a
 *   revocation is seen by the next request in every process sharing the store.
 * - A path naming another account, or a read-only token on a write → 403 / 10000. This is decided from
 *   the path alone, before any lookup, so the answer is the same whether the other account's object
 *   exists or not.
 * The token secret is hashed before it reaches the store and never logged.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { findTokenBySecret, TOKEN_SHAPE, tokenRefusal, touchToken } from '../accounts/tokens.js';
import type { Clock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import type { Store } from '../store/database.js';
import type { Access, Caller } from './route-table.js';

export async function authenticate(headers: IncomingHttpHeaders, store: Store, clock: Clock): Promise<Caller> {
  const header = headers.authorization;
  if (header === undefined || header.trim() === '') {
    throw new SwitchyardError('API_AUTH_REQUIRED', 'Authentication error: send Authorization: Bearer <API token>', {
      details: { additional_errors: [{ code: 9106, message: 'Missing Authorization header' }] },
    });
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const secret = match?.[1];
  if (secret === undefined || !TOKEN_SHAPE.test(secret)) {
    throw new SwitchyardError(
      'API_AUTH_REQUIRED',
      'Authentication error: the Authorization header must be "Bearer <API token>"',
    );
  }
  const found = await findTokenBySecret(store.db, secret);
  if (found === undefined) {
    throw new SwitchyardError('API_AUTH_INVALID', 'Authentication error: the API token is unknown or revoked');
  }
  const refusal = tokenRefusal(found, clock.now());
  if (refusal !== undefined) throw new SwitchyardError('API_AUTH_INVALID', `Authentication error: ${refusal}`);
  const token = await touchToken(store.db, clock, found);
  return { tokenId: token.id, accountId: token.account_id, readOnly: token.read_only };
}

/** Throws 403 unless the caller may use this route with these path parameters. */
export function authorize(caller: Caller, access: Access, params: Readonly<Record<string, string>>): void {
  const account = params.account_id;
  if (account !== undefined && account !== caller.accountId) {
    throw new SwitchyardError('API_FORBIDDEN', 'Authentication error: this token has no access to that account');
  }
  if (access === 'write' && caller.readOnly) {
    throw new SwitchyardError('API_FORBIDDEN', 'Authentication error: this token is read-only; use a read-write token');
  }
}
