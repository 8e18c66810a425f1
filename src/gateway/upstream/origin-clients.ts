/**
 * HTTP clients for origins: one connection pool per origin (scheme://host:port) of the project's own
 * HTTP/1.1 client (http1/), keeping up to `gateway.connections_per_origin` keep-alive sockets
 * (idle sockets close after 30 s, or sooner when the origin's Keep-Alive header asks). Where a request goes
 * and what it carries come from the origin address model (model/origin-address.ts `originTarget`:
 * path and query as stored, Basic auth from user:password) and model/origin-request.ts (the headers),
 * the same the jsonrpc monitor uses. Pools of origins that left the directory are closed by `prune`.
 * Every connect is checked by the outbound policy (`guard`: the routing account's rules, since only
 * its pools are routed).
 */
import { isIP } from 'node:net';
import {
  type BufferPool,
  ClientExchange,
  EndpointPool,
  type PendingResponse,
  requestBytes,
  requestHead,
} from '../../http1/index.js';
import { destinationOf, originTarget } from '../../model/origin-address.js';
import { originRequestHeaders } from '../../model/origin-request.js';
import type { Origin } from '../../model/pool.js';
import { REQUEST_ID_HEADER } from '../../model/request-id.js';
import type { ConnectGuard } from '../../outbound/policy.js';

export type { ClientResponse, PendingResponse } from '../../http1/index.js';

export interface OriginTarget {
  readonly pool: EndpointPool;
  /** The request head for this origin address, up to `content-length: ` (request-head.ts). */
  readonly head: Buffer;
  /** The origin's configured headers set X-Request-Id: a request's own id is not added. */
  readonly ownRequestId: boolean;
}

export interface OriginClientsOptions {
  connectionsPerOrigin: number;
  /** Connect timeout (ms), TLS handshake included. */
  connectTimeoutMs: number;
  /**
   * Extra CA certificates to trust for https origins, besides Node's defaults. For tests against a
   * self-signed origin only: the configuration does not expose it.
   */
  ca?: string | Buffer;
  /** The outbound policy's connect-time check (outbound/policy.ts), applied to every connect. */
  guard?: ConnectGuard;
  /** Where large answers are read into; the gateway's listener releases them there once written. */
  buffers: BufferPool;
}

export class OriginClients {
  readonly #options: OriginClientsOptions;
  readonly #pools = new Map<string, EndpointPool>();
  readonly #targets = new Map<string, { target: OriginTarget; origin: Origin }>();

  constructor(options: OriginClientsOptions) {
    this.#options = options;
  }

  /** The client for an origin; created on first use. Throws a TypeError for an unusable address. */
  target(origin: Origin): OriginTarget {
    const cached = this.#targets.get(origin.address);
    if (cached !== undefined && cached.origin.header === origin.header) return cached.target;
    const address = originTarget(origin.address);
    const headers = originRequestHeaders(origin, address);
    const head = requestHead('POST', address.path, headers);
    let pool = this.#pools.get(address.destination);
    if (pool === undefined) {
      pool = new EndpointPool(
        {
          tls: address.tls,
          host: address.hostname,
          port: address.port,
          // SNI never carries an IP literal.
          servername: isIP(address.hostname) === 0 ? address.hostname : undefined,
          ca: this.#options.ca,
          session: undefined,
          guard: this.#options.guard,
        },
        {
          connections: this.#options.connectionsPerOrigin,
          connectTimeoutMs: this.#options.connectTimeoutMs,
          buffers: this.#options.buffers,
        },
      );
      this.#pools.set(address.destination, pool);
    }
    const target: OriginTarget = { pool, head, ownRequestId: headers.has(REQUEST_ID_HEADER) };
    this.#targets.set(origin.address, { target, origin });
    return target;
  }

  /** Closes clients of origins no longer in use (e.g. after pools changed through the API). */
  prune(inUse: Iterable<Origin>): void {
    const origins = [...inUse];
    const keep = endpointKeys(origins);
    const addresses = new Set<string>();
    for (const origin of origins) addresses.add(origin.address);
    for (const address of this.#targets.keys()) if (!addresses.has(address)) this.#targets.delete(address);
    for (const [key, pool] of this.#pools) {
      if (!keep.has(key)) {
        this.#pools.delete(key);
        pool.close();
      }
    }
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    this.#targets.clear();
    for (const pool of pools) pool.destroy();
  }
}

/** The connection pools (scheme://host:port) these origins need: one per distinct endpoint. */
export function originEndpoints(origins: Iterable<Origin>): number {
  return endpointKeys(origins).size;
}

function endpointKeys(origins: Iterable<Origin>): Set<string> {
  const keys = new Set<string>();
  for (const origin of origins) {
    // Unusable addresses never get a pool.
    const destination = destinationOf(origin.address);
    if (destination !== undefined) keys.add(destination);
  }
  return keys;
}

export interface ExchangeOptions {
  /**
   * The request may be sent a second time: when it was written on a reused keep-alive socket that
   * closed before any byte of the answer (the origin dropped the idle connection as it was sent), it
   * is replayed once on a fresh connection. Only for reads: a write must never be sent twice.
   */
  readonly replayable?: boolean;
  /** Header lines of this request only (each ending in CRLF), after the origin's own: e.g. X-Request-Id. */
  readonly headerLines?: string | undefined;
}

/**
 * POSTs `body` to the target and collects the answer (http1/client/client-exchange.ts). `response` rejects
 * with Node's socket errors (their codes kept), the client's own (http1/client/client-error.ts), or the reason
 * given to `abort`. `timeoutMs` is the exchange's one deadline, from dispatch (queue and connect
 * included) until the answer is complete or its stream is kept (`keep`); a kept stream's body bytes may
 * then be at most `timeoutMs` apart (the stall rule). ORIGIN_HEADERS_TIMEOUT / ORIGIN_BODY_TIMEOUT.
 *
 * With `streamAfter`, a 2xx body that grows past that many bytes resolves early: `body` holds what
 * arrived so far and `rest` streams the remainder, so a large answer never sits whole in memory. The
 * stream pauses the origin while its reader lags, errors if the origin fails midway, and destroying it
 * aborts the request; `abort` no longer applies once the answer streams.
 */
export function exchange(
  target: OriginTarget,
  body: Buffer,
  timeoutMs: number,
  streamAfter?: number,
  options?: ExchangeOptions,
): PendingResponse {
  const pending = new ClientExchange(
    requestBytes(target.head, body, target.ownRequestId ? undefined : options?.headerLines),
    timeoutMs,
    streamAfter,
    options?.replayable === true,
  );
  target.pool.dispatch(pending);
  return pending;
}
