/**
 * `GET /user/tokens/verify` — answers for any valid token (read-only or read-write) with Cloudflare's
 * shape `{id, status: "active"}`; a missing or unknown token gets the usual 401.
 */
import { z } from 'zod';
import { defineRoute, type Route } from '../router.js';

const verifyResult = z.object({ id: z.string(), status: z.literal('active') });

export function userTokenRoutes(): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/user/tokens/verify',
      auth: 'read',
      summary: 'Verify the calling API token',
      tag: 'user',
      result: verifyResult,
      async handler(request) {
        return { result: { id: request.caller?.tokenId, status: 'active' } };
      },
    }),
  ];
}
