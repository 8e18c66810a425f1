/**
 * The headers of a JSON-RPC request to an origin — the same for the gateway (http1/client/request-head.ts)
 * and the jsonrpc monitor (health/probes/jsonrpc.ts), so a probe reaches an origin exactly as traffic
 * does: `host` (host[:port] of the address), `content-type` and `accept` application/json, the origin's
 * `header` map (names lower-cased, several values joined with ", "; a configured Host replaces the
 * address's), and `authorization: Basic …` from the address's user:password, which wins over a configured
 * Authorization. The path and query are `originTarget(address).path` (origin-address.ts).
 */

import { type AddressTarget, originTarget } from './origin-address.js';
import type { Origin } from './pool.js';

/** Header names the HTTP client sets itself (framing and connection management): never taken from config. */
export const CLIENT_HEADERS: ReadonlySet<string> = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
]);

/** Lower-cased name → value, in the order they are written. Throws TypeError for a header the client owns. */
export function originRequestHeaders(
  origin: Pick<Origin, 'address' | 'header'>,
  target: AddressTarget = originTarget(origin.address),
): Map<string, string> {
  const headers = new Map<string, string>([
    ['host', target.host],
    ['content-type', 'application/json'],
    ['accept', 'application/json'],
  ]);
  for (const [name, values] of Object.entries(origin.header)) {
    const lower = name.toLowerCase();
    if (CLIENT_HEADERS.has(lower)) throw new TypeError(`the header ${name} is set by the HTTP client`);
    headers.set(lower, values.join(', '));
  }
  if (target.authorization !== undefined) headers.set('authorization', target.authorization);
  return headers;
}
