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
 *
 * A config reload (SPEC §15, `reconfigure`) hands in the new config and the routes made again from it,
 * so every route reads the new config (`limits`, `networks`, `webhooks`, …) from the next request on;
 * a request in flight finishes on the route it matched. With `api.tls`, the certificate and key read
 * again from their files go to the handshakes that follow (`setSecureContext`).
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../clock.js';
import { API_BASE_PATH } from '../config/api-url.js';
import type { Config } from '../config/schema.js';
import { readTlsPair, type TlsPair } from '../config/tls-files.js';
import { SwitchyardError } from '../errors/base.js';
import { type Logger, silentLogger } from '../log.js';
import { type Counter, type Histogram, MetricsRegistry } from '../metrics/registry.js';
import { REQUEST_ID_HEADER, requestIdOf } from '../model/request-id.js';
import type { Store } from '../store/database.js';
import { authenticate, authorize } from './auth.js';
import { RequestAbortedError, readJsonBody } from './body.js';
import { ConnectionTracker } from './connection-tracker.js';
import { ConsoleAssets } from './console-assets.js';
import { type ApiReply, errorResponse, sendJson, sendJsonText, successBody } from './envelope.js';
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
  /** A reloaded config, the routes made from it and, with `api.tls`, its files read again (see the header). */
  reconfigure(config: Readonly<Config>, routes: readonly Route[], tls: TlsPair | undefined): void;
}

export function createApiServer(options: ApiServerOptions): ApiServer {
  const { config } = options;
  const handler = new ApiHandler(options);
  const tls = config.api.tls;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => handler.onRequest(req, res);
  const server: Server =
    tls === undefined ? createHttpServer(onRequest) : createHttpsServer(readTlsPair(tls), onRequest);
  server.keepAliveTimeout = 5_000;
  const connections = new ConnectionTracker(server);
  return {
    get router() {
      return handler.router;
    },
    listen: () => listen(server, config.api.listen, tls === undefined ? 'http' : 'https'),
    close: () => connections.close(handler.config.shutdown_grace),
    reconfigure: (next, routes, pair) => {
      handler.reconfigure(next, routes);
      if (pair !== undefined && server instanceof HttpsServer) server.setSecureContext(pair);
    },
  };
}

/** The routes handed in and the OpenAPI document made from them. */
function routeTable(routes: readonly Route[]): RouteTable {
  const table = new RouteTable(routes);
  table.add(openApiRoute(table));
  return table;
}

/** One request at a time, as the header lists: metrics, console files, or a route of the table. */
class ApiHandler {
  router: RouteTable;
  #options: ApiServerOptions;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #metrics: MetricsRegistry;
  readonly #requests: Counter;
  readonly #duration: Histogram;
  readonly #console: ConsoleAssets | undefined;

  constructor(options: ApiServerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? silentLogger).child({ component: 'api' });
    this.#metrics = options.metrics ?? new MetricsRegistry();
    this.router = routeTable(options.routes);
    this.#requests = this.#metrics.counter(
      'switchyard_api_requests_total',
      'Management API requests by route and status',
      ['method', 'route', 'status'],
    );
    this.#console = options.config.api.console ? new ConsoleAssets() : undefined;
    this.#duration = this.#metrics.histogram(
      'switchyard_api_request_duration_seconds',
      'Management API request latency',
      ['method', 'route'],
    );
  }

  get config(): Readonly<Config> {
    return this.#options.config;
  }

  reconfigure(config: Readonly<Config>, routes: readonly Route[]): void {
    this.#options = { ...this.#options, config, routes };
    this.router = routeTable(routes);
  }

  onRequest(req: IncomingMessage, res: ServerResponse): void {
    const header = req.headers[REQUEST_ID_HEADER];
    const id = requestIdOf(typeof header === 'string' ? header : undefined);
    res.setHeader(REQUEST_ID_HEADER, id);
    const log = this.#logger.child({ request_id: id });
    this.#handle(req, res, log).catch((err: unknown) => {
      // Only reachable if writing the answer itself failed; still an envelope when nothing was sent.
      log.error('api response failed', { err });
      try {
        if (res.headersSent) res.end();
        else {
          const internal = new SwitchyardError('API_INTERNAL', 'Internal error', { cause: err });
          sendJson(res, 500, errorResponse(internal, log).body);
        }
      } catch {
        res.destroy();
      }
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse, log: Logger): Promise<void> {
    const started = this.#clock.monotonic();
    const seen = { route: 'unmatched', status: 500 };
    try {
      const url = new URL(req.url ?? '/', 'http://api.invalid');
      if (await this.#served(req, res, url, seen)) return;
      const reply = await this.#dispatch(req, url, (pattern) => {
        seen.route = pattern;
      });
      seen.status = reply.status ?? 200;
      if (reply.raw === undefined) sendJsonText(res, seen.status, successBody(reply));
      else sendJson(res, seen.status, reply.raw);
    } catch (err) {
      seen.status = this.#failed(req, res, err, seen.route, log);
    } finally {
      const method = req.method ?? '';
      this.#requests.inc({ method, route: seen.route, status: String(seen.status) });
      this.#duration.observe({ method, route: seen.route }, (this.#clock.monotonic() - started) / 1000);
      log.debug('api request', { method: req.method, route: seen.route, status: seen.status });
    }
  }

  /** `/metrics` and the console's files, outside the v4 routes; true when answered. */
  async #served(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    seen: { route: string; status: number },
  ): Promise<boolean> {
    if (url.pathname === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
      seen.status = 200;
      seen.route = '/metrics';
      const render = this.#options.renderMetrics;
      const text = render === undefined ? this.#metrics.render() : await render();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(req.method === 'HEAD' ? undefined : text);
      return true;
    }
    if (this.#console?.handle(req, res, url.pathname) === true) {
      seen.route = '/console';
      seen.status = res.statusCode;
      return true;
    }
    return false;
  }

  /** The error envelope (or, for a client that went away, nothing); returns the status to count. */
  #failed(req: IncomingMessage, res: ServerResponse, err: unknown, route: string, log: Logger): number {
    if (err instanceof RequestAbortedError) {
      log.debug('api request aborted by the client', { method: req.method, route });
      res.destroy();
      return CLIENT_CLOSED_REQUEST;
    }
    const failure = errorResponse(err, log);
    sendJson(res, failure.status, failure.body, failure.headers);
    return failure.status;
  }

  /** Route, authenticate, authorize, read the body: then the route's handler. */
  async #dispatch(req: IncomingMessage, url: URL, onRoute: (pattern: string) => void): Promise<ApiReply> {
    const { path, route, params } = this.#route(req.method ?? '', url.pathname);
    onRoute(route.path);
    const caller = route.auth === 'none' ? null : await authenticate(req.headers, this.#options.store, this.#clock);
    if (caller !== null) authorize(caller, route.auth, params);
    refuseNulInQuery(url.searchParams);
    let body: unknown;
    if (route.body !== undefined) {
      body = validateBody(route.body, await readJsonBody(req, this.#options.config.api.max_body_bytes));
    }
    const method = route.method as HttpMethod;
    const request: ApiRequest = { method, path, params, query: url.searchParams, headers: req.headers, body, caller };
    return route.handler(request);
  }

  /** The route a path names (404 / 405 with Allow otherwise), with the path below the base. */
  #route(method: string, pathname: string): { path: string; route: Route; params: Record<string, string> } {
    if (!pathname.startsWith(`${API_BASE_PATH}/`)) {
      throw new SwitchyardError('API_NOT_FOUND', `No such route; the API is served under ${API_BASE_PATH}/`);
    }
    const path = pathname.slice(API_BASE_PATH.length).replace(/(.)\/$/, '$1');
    const match = this.router.match(method, path);
    if (match.kind === 'not-found') throw new SwitchyardError('API_NOT_FOUND', `No route for ${method} ${path}`);
    if (match.kind === 'method-not-allowed') {
      throw new SwitchyardError('API_METHOD_NOT_ALLOWED', `${method} is not supported on ${path}`, {
        headers: { allow: match.allow.join(', ') },
      });
    }
    return { path, route: match.route, params: match.params };
  }
}

/** PostgreSQL text cannot hold NUL: refused here for every route, so both backends answer alike. */
function refuseNulInQuery(query: URLSearchParams): void {
  for (const [name, value] of query) {
    if (name.includes('\0') || value.includes('\0')) {
      throw new SwitchyardError('API_VALIDATION', 'query: parameters may not contain the NUL character (%00)');
    }
  }
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
