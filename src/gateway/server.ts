/**
 * The gateway listener: `POST /v1/{network}` on `gateway.listen` (default 127.0.0.1:8545; HTTPS when
 * `gateway.tls` is set). HTTP-level checks, in this order, each with its catalog error:
 *   path (404) → HTTP method (405 + Allow: POST) → API key (401, when configured)
 *   → Content-Type (415) → body size (413) → handler.ts (JSON-RPC).
 * Browsers are served: CORS preflights (OPTIONS with Access-Control-Request-Method) get 204, and every
 * response allows any origin (the gateway holds no cookies; API keys are explicit).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassiveEjection } from '../balancing/ejection.js';
import type { HealthView, PoolDirectory } from '../balancing/model.js';
import { OutstandingRequests } from '../balancing/outstanding.js';
import { Router } from '../balancing/router.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { SwitchyardError } from '../errors/base.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics.js';
import { ApiKeys } from './access.js';
import { readBody } from './body.js';
import { FilterAffinity } from './filters.js';
import { type Forwarder, OriginForwarder } from './forward.js';
import { RpcHandler } from './handler.js';
import { startListener } from './listener.js';
import { GatewayMetrics } from './metrics.js';
import { RateLimiter } from './rate-limit.js';
import { asSwitchyardError, sendBody, sendError, sendStream } from './respond.js';
import { OriginClients } from './upstream.js';

export interface GatewayOptions {
  config: Readonly<Config>;
  directory: PoolDirectory;
  health: HealthView;
  clock: Clock;
  logger: Logger;
  /** Where gateway metrics go (the API's /metrics); none when absent. */
  metrics?: MetricsRegistry;
  /** Wraps the origin forwarder, e.g. with a response cache (issue 7). */
  wrapForwarder?: (inner: Forwarder) => Forwarder;
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
  const clients = new OriginClients({
    connectionsPerOrigin: settings.connections_per_origin,
    connectTimeoutMs: Math.min(settings.request_timeout, 10_000),
  });
  const ejection = new PassiveEjection(clock);
  const outstanding = new OutstandingRequests();
  const router = new Router({ directory: options.directory, health: options.health, ejection, outstanding });
  const origins = new OriginForwarder({
    router,
    clients,
    health: options.health,
    ejection,
    outstanding,
    filters: new FilterAffinity(clock),
    metrics,
    logger,
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

  const handle = async (req: IncomingMessage, res: ServerResponse, match: RegExpExecArray | null): Promise<void> => {
    if (!match) {
      throw new SwitchyardError(
        'NOT_FOUND',
        `No such path ${JSON.stringify(req.url)}; send JSON-RPC to POST /v1/{network}.`,
      );
    }
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      sendBody(res, 204, undefined, PREFLIGHT);
      return;
    }
    if (req.method !== 'POST') {
      throw new SwitchyardError(
        'HTTP_METHOD_NOT_ALLOWED',
        `HTTP ${req.method} is not supported here; send JSON-RPC with POST.`,
        {
          headers: { allow: 'POST' },
        },
      );
    }
    const key = apiKeys?.authenticate(req);
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (!JSON_TYPES.has(type)) {
      throw new SwitchyardError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Content-Type ${type === '' ? '(none)' : JSON.stringify(type)} is not supported; send Content-Type: application/json.`,
      );
    }
    const body = await readBody(req, settings.max_body_bytes);
    const network = decodeNetwork(match[1] as string);
    // The client's abort signal is made only when forwarding asks for it: an AbortController per
    // request is a measurable share of a cache hit's cost, and hits never need one.
    let aborted: AbortController | undefined;
    let gone = false;
    res.on('close', () => {
      if (res.writableFinished) return;
      gone = true;
      aborted?.abort();
    });
    const clientSignal = (): AbortSignal => {
      if (aborted === undefined) {
        aborted = new AbortController();
        if (gone) aborted.abort();
      }
      return aborted.signal;
    };
    const client = key ?? req.socket.remoteAddress ?? 'unknown';
    const answer = await handler.handle(network, body, client, clientSignal);
    // CORS then the answer's own headers, as two lists: no merged object per request.
    if (answer.rest !== undefined && answer.body !== undefined) {
      sendStream(res, answer.status, answer.body, answer.rest, answer.length, CORS, answer.headers);
    } else {
      sendBody(res, answer.status, answer.body, CORS, answer.headers);
    }
  };

  const listener = await startListener({ listen: settings.listen, tls: settings.tls }, (req, res) => {
    const started = performance.now();
    // The path is matched once per request; the metric is taken when the answer was sent in full
    // ('close' follows 'finish'; one plain listener instead of two once-wrapped ones).
    const match = PATH.exec(req.url ?? '/');
    res.on('close', () => {
      if (res.writableFinished) metrics.request(match?.[1] ?? '', res.statusCode, (performance.now() - started) / 1000);
    });
    handle(req, res, match).catch((err: unknown) => {
      const error = asSwitchyardError(err);
      if (error.code === 'GATEWAY_INTERNAL') logger.error('gateway request failed', { err });
      sendError(res, error, undefined, CORS);
    });
  });
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

/** The network segment of the path, percent-decoded; a malformed escape is kept as written (then unknown). */
function decodeNetwork(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
