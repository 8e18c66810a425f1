/**
 * The management API listener: `node:http` (or `node:https` when `api.tls` is set), bound to
 * `api.listen` (default 127.0.0.1:8787, never the gateway's port). Serves
 *   - `/client/v4/...`            the routes handed in (one file per resource under routes/),
 *   - `/client/v4/openapi.json`   the OpenAPI 3.1 document generated from those routes' schemas,
 *   - `/metrics`                  the Prometheus registry (no token: aggregate numbers only),
 *   - `/` and `/console/...`      the operator console's files (console-assets.ts) unless `api.console` is false.
 *
 * Per request: match route (404 / 7003, 405 / 10405 + Allow) → authenticate (401) → authorize (403)
 * → read and validate the JSON body (413, 415, 400) → handler → v4 envelope. Headers the official SDK
 * adds (`api-version`, `x-stainless-*`, `user-agent`) are accepted and ignored. A client that goes away
 * mid-body is logged at debug (not error) and counted with status 499 ("client closed request").
 * Every request has an id (model/request-id.ts: the client's `X-Request-Id` when usable, else a new one),
 * returned in `X-Request-Id` and carried by the request's log lines (`request_id`).
 *
 * `close()` stops accepting, closes idle connections at once, lets in-flight requests finish for up to
 * `shutdown_grace`, then drops the remaining connections (src/api/connection-tracker.ts).
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../clock.js';
import { API_BASE_PATH } from '../config/api-url.js';
import type { Config } from '../config/schema.js';
import { SwitchyardError } from '../errors/base.js';
import { type Logger, silentLogger } from '../log.js';
import { MetricsRegistry } from '../metrics/registry.js';
import { REQUEST_ID_HEADER, requestIdOf } from '../model/request-id.js';
import type { Store } from '../store/database.js';
import { authenticate, authorize } from './auth.js';
import { RequestAbortedError, readJsonBody } from './body.js';
import { ConnectionTracker } from './connection-tracker.js';
import { ConsoleAssets } from './console-assets.js';
import { errorResponse, sendJson, sendJsonText, successBody } from './envelope.js';
import { openApiRoute } from './openapi.js';
import { type ApiRequest, type HttpMethod, type Route, RouteTable } from './route-table.js';
import { validateBody } from './validate.js';

export { API_BASE_PATH } from '../config/api-url.js';

/** The metrics' status label of a request whose client went away first (nginx's convention). */
const CLIENT_CLOSED_REQUEST = 499;

export interface ApiServerOptions {
  config: Readonly<Config>;
  store: Store;
  routes: readonly Route[];
  clock?: Clock;
  logger?: Logger;
  metrics?: MetricsRegistry;
  /** What `/metrics` answers (default: `metrics` rendered); with gateway workers, their sum (SPEC §11). */
  renderMetrics?: () => Promise<string>;
}

export interface ApiServer {
  /** Binds `api.listen`; resolves to the base URL without the path, e.g. `http://127.0.0.1:8787`. */
  listen(): Promise<string>;
  close(): Promise<void>;
  readonly router: RouteTable;
}

export function createApiServer(options: ApiServerOptions): ApiServer {
  const { config, store } = options;
  const clock = options.clock ?? systemClock;
  const logger = (options.logger ?? silentLogger).child({ component: 'api' });
  const metrics = options.metrics ?? new MetricsRegistry();
  const router = new RouteTable(options.routes);
  router.add(openApiRoute(router));
  const requests = metrics.counter('switchyard_api_requests_total', 'Management API requests by route and status', [
    'method',
    'route',
    'status',
  ]);
  const consoleAssets = config.api.console ? new ConsoleAssets() : undefined;
  const duration = metrics.histogram('switchyard_api_request_duration_seconds', 'Management API request latency', [
    'method',
    'route',
  ]);

  async function handle(req: IncomingMessage, res: ServerResponse, log: Logger): Promise<void> {
    const started = performance.now();
    let routeLabel = 'unmatched';
    let status = 500;
    try {
      const url = new URL(req.url ?? '/', 'http://api.invalid');
      if (url.pathname === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
        status = 200;
        routeLabel = '/metrics';
        const text = options.renderMetrics === undefined ? metrics.render() : await options.renderMetrics();
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(req.method === 'HEAD' ? undefined : text);
        return;
      }
      if (consoleAssets?.handle(req, res, url.pathname) === true) {
        routeLabel = '/console';
        status = res.statusCode;
        return;
      }
      const reply = await dispatch(req, url, (pattern) => {
        routeLabel = pattern;
      });
      status = reply.status ?? 200;
      if (reply.raw === undefined) sendJsonText(res, status, successBody(reply));
      else sendJson(res, status, reply.raw);
    } catch (err) {
      if (err instanceof RequestAbortedError) {
        status = CLIENT_CLOSED_REQUEST;
        log.debug('api request aborted by the client', { method: req.method, route: routeLabel });
        res.destroy();
        return;
      }
      const failure = errorResponse(err, log);
      status = failure.status;
      sendJson(res, status, failure.body, failure.headers);
    } finally {
      requests.inc({ method: req.method ?? '', route: routeLabel, status: String(status) });
      duration.observe({ method: req.method ?? '', route: routeLabel }, (performance.now() - started) / 1000);
      log.debug('api request', { method: req.method, route: routeLabel, status });
    }
  }

  async function dispatch(req: IncomingMessage, url: URL, onRoute: (pattern: string) => void) {
    if (!url.pathname.startsWith(`${API_BASE_PATH}/`)) {
      throw new SwitchyardError('API_NOT_FOUND', `No such route; the API is served under ${API_BASE_PATH}/`);
    }
    const path = url.pathname.slice(API_BASE_PATH.length).replace(/(.)\/$/, '$1');
    const match = router.match(req.method ?? '', path);
    if (match.kind === 'not-found') throw new SwitchyardError('API_NOT_FOUND', `No route for ${req.method} ${path}`);
    if (match.kind === 'method-not-allowed') {
      throw new SwitchyardError('API_METHOD_NOT_ALLOWED', `${req.method} is not supported on ${path}`, {
        headers: { allow: match.allow.join(', ') },
      });
    }
    const { route, params } = match;
    onRoute(route.path);
    const caller = route.auth === 'none' ? null : await authenticate(req.headers, store, clock);
    if (caller !== null) authorize(caller, route.auth, params);
    // PostgreSQL text cannot hold NUL: refused here for every route, so both backends answer alike.
    for (const [name, value] of url.searchParams) {
      if (name.includes('\0') || value.includes('\0')) {
        throw new SwitchyardError('API_VALIDATION', 'query: parameters may not contain the NUL character (%00)');
      }
    }
    let body: unknown;
    if (route.body !== undefined) {
      body = validateBody(route.body, await readJsonBody(req, config.api.max_body_bytes));
    }
    const request: ApiRequest = {
      method: route.method as HttpMethod,
      path,
      params,
      query: url.searchParams,
      headers: req.headers,
      body,
      caller,
    };
    return route.handler(request);
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const header = req.headers[REQUEST_ID_HEADER];
    const id = requestIdOf(typeof header === 'string' ? header : undefined);
    res.setHeader(REQUEST_ID_HEADER, id);
    const log = logger.child({ request_id: id });
    handle(req, res, log).catch((err: unknown) => {
      // Only reachable if writing the answer itself failed; still an envelope when nothing was sent.
      log.error('api response failed', { err });
      try {
        if (res.headersSent) res.end();
        else sendJson(res, 500, errorResponse(new SwitchyardError('API_INTERNAL', 'Internal error'), log).body);
      } catch {
        res.destroy();
      }
    });
  };
  const tls = config.api.tls;
  const server: Server =
    tls === undefined
      ? createHttpServer(onRequest)
      : createHttpsServer({ cert: readFileSync(tls.cert_file), key: readFileSync(tls.key_file) }, onRequest);
  server.keepAliveTimeout = 5_000;
  const connections = new ConnectionTracker(server);

  return {
    router,
    listen: () => listen(server, config.api.listen, tls === undefined ? 'http' : 'https'),
    close: () => connections.close(config.shutdown_grace),
  };
}

function listen(server: Server, address: string, scheme: 'http' | 'https'): Promise<string> {
  const separator = address.lastIndexOf(':');
  const host = address.slice(0, separator).replace(/^\[(.*)\]$/, '$1');
  const port = Number(address.slice(separator + 1));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const bound = server.address() as AddressInfo;
      const shown = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
      resolve(`${scheme}://${shown}:${bound.port}`);
    });
  });
}
