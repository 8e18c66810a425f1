/**
 * The HTTP/1.1 client driven directly through its contract (src/http1/index.ts), for the client's tests:
 * an `EndpointPool` for an http(s) URL and POSTs of a body to the URL's path and query, each a
 * `ClientExchange` dispatched on that pool. The request head carries `host`, `content-type` and
 * `accept` (node:http origins refuse HTTP/1.1 requests without a Host); userinfo in the URL is ignored
 * (credentials are the gateway's business: test/gateway/origin-clients.test.ts).
 */
import { isIP } from 'node:net';
import {
  ClientExchange,
  type Endpoint,
  EndpointPool,
  type EndpointPoolOptions,
  requestBytes,
  requestHead,
} from '../../src/http1/index.js';

export interface UrlClient {
  readonly pool: EndpointPool;
  /** The request head for the URL, up to `content-length: ` (requestHead). */
  readonly head: Buffer;
}

export interface UrlClientOptions extends EndpointPoolOptions {
  /** Extra CA certificates to trust for an https URL (a self-signed test origin). */
  readonly ca?: string | Buffer;
}

/** The endpoint an http(s) URL names: TLS for https, no SNI for an IP address. */
export function endpointOf(url: URL, ca?: string | Buffer): Endpoint {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const tls = url.protocol === 'https:';
  return {
    tls,
    host,
    port: url.port === '' ? (tls ? 443 : 80) : Number(url.port),
    servername: isIP(host) === 0 ? host : undefined,
    ca,
    session: undefined,
  };
}

/** A pool of connections to the URL's endpoint, and the head of a POST to its path and query. */
export function clientFor(url: string, options: UrlClientOptions): UrlClient {
  const parsed = new URL(url);
  const { ca, ...poolOptions } = options;
  const head = requestHead('POST', `${parsed.pathname}${parsed.search}`, [
    ['host', parsed.host],
    ['content-type', 'application/json'],
    ['accept', 'application/json'],
  ]);
  return { pool: new EndpointPool(endpointOf(parsed, ca), poolOptions), head };
}

export interface PostOptions {
  /** A 2xx body growing past this many bytes resolves early with `rest` (ClientExchange). */
  readonly streamAfter?: number;
  /** May be sent once more on a fresh connection after a stale keep-alive socket. */
  readonly replayable?: boolean;
}

/** POSTs `body` through the client's pool; `timeoutMs` is the exchange's deadline. */
export function post(client: UrlClient, body: Buffer, timeoutMs: number, options: PostOptions = {}): ClientExchange {
  const exchange = new ClientExchange(
    requestBytes(client.head, body),
    timeoutMs,
    options.streamAfter,
    options.replayable === true,
  );
  client.pool.dispatch(exchange);
  return exchange;
}
