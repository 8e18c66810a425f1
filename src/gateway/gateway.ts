/**
 * The gateway listener: `POST /v1/{network}` on `gateway.listen` (default 127.0.0.1:8545; HTTPS when
 * `gateway.tls` is set). HTTP-level checks, in this order, each with its catalog error:
 *   path (404) → HTTP method (405 + Allow: POST) → API key (401, when configured)
 *   → Content-Type (415) → body size (413) → handler.ts (JSON-RPC).
 * Browsers are served: CORS preflights (OPTIONS with Access-Control-Request-Method) get 204, and every
 * response allows any origin (the gateway holds no cookies; API keys are explicit).
 *
 * No client starves the others (docs/gateway.md "No client starves the gateway"): the listener cuts
 * stalled streams (`stream_stall_timeout`) and bounds connections (`max_connections`, lowered at start
 * to fit the file-descriptor limit: fd-budget.ts; `max_connections_per_client`); origin-forwarder.ts bounds
 * streams per client (`max_streams_per_client`, stream-slots.ts) and answers GATEWAY_BUSY rather than
 * blaming an origin for the gateway's own queue.
 */

import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { SwitchyardError } from '../errors/base.js';
import { BufferPool, type RequestRefusal, type ServerExchange } from '../http1/index.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { HealthView } from '../model/health-view.js';
import type { PoolDirectory } from '../model/pool.js';
import { OutboundPolicy } from '../outbound/policy.js';
import { OriginFeedback } from '../routing/feedback.js';
import { OutstandingRequests } from '../routing/outstanding.js';
import { OriginRouter } from '../routing/router.js';
import { connectionBudget, openFilesLimit } from './fd-budget.js';
import { ApiKeys } from './http/api-keys.js';
import { startListener } from './http/listener.js';
import { edgeError, sendBody, sendError, sendStream } from './http/respond.js';
import { GatewayMetrics } from './metrics.js';
import type { Forwarder } from './rpc/forwarder.js';
import { type HttpAnswer, RpcHandler } from './rpc/handler.js';
import { RateLimiter } from './rpc/rate-limit.js';
import { FilterAffinity } from './upstream/filter-affinity.js';
import { OriginClients, originEndpoints } from './upstream/origin-clients.js';
import { OriginForwarder } from './upstream/origin-forwarder.js';
import { StreamSlots } from './upstream/stream-slots.js';

export interface GatewayOptions {
  config: Readonly<Config>;
  directory: PoolDirectory;
  health: HealthView;
  clock: Clock;
  logger: Logger;
  /** Where gateway metrics go (the API's /metrics); none when absent. */
  metrics?: MetricsRegistry;
  /** The outbound target policy origin connects follow (default: from `outbound.trusted_accounts`). */
  outbound?: OutboundPolicy;
  /** Wraps the origin forwarder, e.g. with a response cache (issue 7). */
  wrapForwarder?: (inner: Forwarder) => Forwarder;
  /**
   * The read buffers large answers pass through, from the origin clients to the listener (default: a
   * new pool). Tests only: to watch its recycling.
   */
  buffers?: BufferPool;
}

export interface Gateway {
  readonly url: string;
  close(graceMs: number): Promise<void>;
}

const PATH = /^\/v1\/([^/?#]+)\/?(?:\?.*)?$/;
const JSON_TYPES = new Set(['application/json', 'application/json-rpc']);
const CORS = { 'access-control-allow-origin': '*' };
const PREFLIGHT = {
  ...CORS,
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'content-type, authorization',
  'access-control-max-age': '86400',
};

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, logger, clock } = options;
  const settings = config.gateway;
  const metrics = new GatewayMetrics(options.metrics, Object.keys(config.networks));
  // Only the routing account's pools are routed, so its outbound rules apply to every origin connect.
  const outbound = options.outbound ?? new OutboundPolicy({ trustedAccounts: config.outbound.trusted_accounts });
  // One pool for both halves: origin sockets read large answers into it, the listener releases them.
  const buffers = options.buffers ?? new BufferPool();
  const clients = new OriginClients({
    connectionsPerOrigin: settings.connections_per_origin,
    connectTimeoutMs: Math.min(settings.request_timeout, 10_000),
    guard: outbound.connectGuard(outbound.rulesFor(config.account_id)),
    buffers,
  });
  // Attempt outcomes go to one place: it demotes unreachable origins (read by the router) and tells the HealthView.
  const feedback = new OriginFeedback(options.health, clock);
  const outstanding = new OutstandingRequests();
  const router = new OriginRouter({
    directory: options.directory,
    health: options.health,
    demotion: feedback.demotion,
    outstanding,
  });
  const origins = new OriginForwarder({
    router,
    clients,
    feedback,
    outstanding,
    filters: new FilterAffinity(clock),
    metrics,
    logger,
    streamSlots: new StreamSlots(settings.max_streams_per_client),
    requestTimeoutMs: settings.request_timeout,
    maxAttempts: settings.max_attempts,
  });
  const forwarder = options.wrapForwarder ? options.wrapForwarder(origins) : origins;
  const handler = new RpcHandler({
    networks: config.networks,
    forwarder,
    clock,
    logger,
    maxBatch: settings.max_batch,
    metrics,
    rateLimiter: settings.rate_limit ? new RateLimiter(settings.rate_limit, clock) : undefined,
  });
  const apiKeys = settings.api_keys ? new ApiKeys(settings.api_keys) : undefined;
  const unsubscribe = options.directory.onChange(() =>
    clients.prune(options.directory.allPools().flatMap((pool) => pool.origins)),
  );

  // Synchronous until something must wait (the body still arriving, an origin): a request whose body
  // is in and whose answer is cached is answered without a promise or microtask on the way.
  const handle = (ex: ServerExchange, match: RegExpExecArray | null): Promise<void> | undefined => {
    if (!match) {
      throw new SwitchyardError(
        'NOT_FOUND',
        `No such path ${JSON.stringify(ex.target)}; send JSON-RPC to POST /v1/{network}.`,
      );
    }
    if (ex.method === 'OPTIONS' && ex.header('access-control-request-method') !== undefined) {
      sendBody(ex, 204, undefined, PREFLIGHT);
      return undefined;
    }
    if (ex.method !== 'POST') {
      throw new SwitchyardError(
        'HTTP_METHOD_NOT_ALLOWED',
        `HTTP ${ex.method} is not supported here; send JSON-RPC with POST.`,
        {
          headers: { allow: 'POST' },
        },
      );
    }
    const key = apiKeys?.authenticate(ex.header('authorization'), ex.target);
    const type = mediaType(ex.header('content-type'));
    if (!JSON_TYPES.has(type)) {
      throw new SwitchyardError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Content-Type ${type === '' ? '(none)' : JSON.stringify(type)} is not supported; send Content-Type: application/json.`,
      );
    }
    // The listener enforces max_body_bytes while reading (a RequestRefusal → BODY_TOO_LARGE, 413).
    const body = ex.bodyIfComplete();
    if (body === undefined) return ex.readBody().then((late) => respond(ex, match, late, key));
    return respond(ex, match, body, key);
  };

  const respond = (
    ex: ServerExchange,
    match: RegExpExecArray,
    body: Buffer,
    key: string | undefined,
  ): Promise<void> | undefined => {
    const network = decodeNetwork(match[1] as string);
    // The client's signal (a GoneSignal, made by the exchange on first use) tells forwarding when to stop.
    const client = key ?? ex.remoteAddress ?? 'unknown';
    const answer = handler.handle(network, body, client, () => ex.signal());
    if (answer instanceof Promise) return answer.then((late) => send(ex, late));
    send(ex, answer);
    return undefined;
  };

  const send = (ex: ServerExchange, answer: HttpAnswer): void => {
    // CORS then the answer's own headers, as two lists: no merged object per request.
    if (answer.rest !== undefined && answer.body !== undefined) {
      sendStream(ex, answer.status, answer.body, answer.rest, answer.length, CORS, answer.headers);
    } else {
      sendBody(ex, answer.status, answer.body, CORS, answer.headers);
    }
  };

  const fail = (ex: ServerExchange, err: unknown): void => {
    sendError(ex, edgeError(err, logger), undefined, CORS);
  };

  const fdLimit = openFilesLimit();
  const budget = connectionBudget({
    configured: settings.max_connections,
    fdLimit,
    originConnections:
      settings.connections_per_origin * originEndpoints(options.directory.allPools().flatMap((pool) => pool.origins)),
  });
  if (budget.lowered) {
    logger.warn(
      `gateway.max_connections lowered to ${budget.maxConnections}: the process may open ${fdLimit} files ` +
        `(RLIMIT_NOFILE) and keeps ${budget.reserve} for the API listener, the store and origin connections; ` +
        'raise the limit (ulimit -n, LimitNOFILE=) to allow more',
      {
        max_connections: budget.maxConnections,
        configured: settings.max_connections,
        fd_limit: fdLimit,
        reserve: budget.reserve,
      },
    );
  }

  const listener = await startListener(
    {
      listen: settings.listen,
      tls: settings.tls,
      maxBodyBytes: settings.max_body_bytes,
      streamStallMs: settings.stream_stall_timeout,
      maxConnections: budget.maxConnections,
      maxConnectionsPerClient: settings.max_connections_per_client,
      refused: (limit) => metrics.connectionRefused(limit),
      buffers,
    },
    {
      request: (ex) => {
        // The path is matched once per request; its network labels the request's metric.
        const match = PATH.exec(ex.target);
        ex.tag = match?.[1] ?? '';
        try {
          handle(ex, match)?.catch((err: unknown) => fail(ex, err));
        } catch (err) {
          fail(ex, err);
        }
      },
      refused: (ex: ServerExchange, err: RequestRefusal) => fail(ex, err),
      // Taken when the answer was handed to the socket in full.
      answered: (ex) => metrics.request(ex.tag, ex.status, (performance.now() - ex.startedAt) / 1000),
      streamCut: () => {
        metrics.streamCut();
        logger.debug('streamed answer cut: the client took no bytes for gateway.stream_stall_timeout', {
          stream_stall_timeout_ms: settings.stream_stall_timeout,
        });
      },
    },
  );
  logger.info('gateway listening', { url: listener.url });
  return {
    url: listener.url,
    close: async (graceMs) => {
      await listener.close(graceMs);
      unsubscribe();
      await clients.close();
    },
  };
}

/** The media type of a Content-Type value, lower-cased, without parameters ('' when absent). */
function mediaType(value: string | undefined): string {
  if (value === undefined) return '';
  // The usual value as clients send it, without splitting or new strings.
  if (value === 'application/json') return value;
  return value.split(';')[0]?.trim().toLowerCase() ?? '';
}

/** The network segment of the path, percent-decoded; a malformed escape is kept as written (then unknown). */
function decodeNetwork(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
