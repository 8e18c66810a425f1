/**
 * WebSocket on the gateway listener (SPEC §10): `GET /v1/{network}` with `Upgrade: websocket`, through
 * the http1 upgrade hook (ws:// on a plain listener, wss:// when `gateway.tls` is set). The handshake
 * makes the HTTP checks, in HTTP's order, each refused with its HTTP status and the same JSON-RPC error
 * body as over HTTP (id null), then the connection closes:
 *   path (404) → method GET (405) → network known (404) and not retired (410, with Sunset/Link), before
 *   any key check → key as `Authorization: Bearer` or `?key=` (http/key-auth.ts, as over HTTP: 401, or 403
 *   for a gateway key outside its networks) → rate limit (429, one token) → the client's WebSocket connections under `max_connections_per_client` (64; 429).
 * Framing is the `ws` library's (`WebSocketServer` with noServer, `maxPayload` = gateway.max_body_bytes).
 * A deprecated network's Deprecation/Sunset/Link headers go on the 101 answer.
 * `close()` (shutdown) lets each connection send its answers in flight, then closes it with 1001.
 * A gateway key disabled, deleted, rolled or no longer allowed on the connection's network while its
 * connections are open: when the key table changes (within 1 s of the change, anywhere), those
 * connections are shut down the same way (answers in flight first), with close code 4001 and a reason
 * saying which: "gateway key revoked" (disabled or deleted), "gateway key rolled: reconnect with the new
 * value", or "gateway key no longer allows network NAME" (SPEC §20).
 * Request ids (SPEC §16): the handshake keeps the client's `X-Request-Id` (or gets one made) and answers
 * with it, on the 101 as on a refusal (whose error carries it in `data.request_id`); it becomes the
 * connection's `connection_id` in its log lines. Each message then gets a request id of its own
 * (connection.ts). The handshake has an access-log line of its own (status 101, or the refusal's).
 * A config reload (`reconfigure`) changes `gateway.websocket.*` and `max_body_bytes` for the connections
 * opened from then on; open connections keep the limits they were opened with.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import type { Clock } from '../../clock.js';
import { SwitchyardError } from '../../errors/base.js';
import type { ServerExchange } from '../../http1/index.js';
import type { Logger } from '../../log.js';
import type { GatewayKeyRecord, GatewayKeyTable } from '../../model/gateway-keys.js';
import type { AddressRanges } from '../../model/ip-address.js';
import { REQUEST_ID_HEADER, requestIdOf } from '../../model/request-id.js';
import type { AccessLog } from '../http/access-log.js';
import { exchangeClient } from '../http/client-address.js';
import { decodeNetwork, GATEWAY_PATH } from '../http/edge.js';
import type { GatewayAuth } from '../http/key-auth.js';
import { echoedPath } from '../http/respond.js';
import { asSwitchyardError, errorResponse } from '../rpc/errors.js';
import type { RpcHandler } from '../rpc/handler.js';
import { RequestTrace } from '../rpc/request-trace.js';
import type { Subscriptions } from '../rpc/subscriptions-port.js';
import { CLOSE_KEY_REVOKED, WsConnection, type WsLimits } from './connection.js';
import type { WsMetrics } from './metrics.js';

export interface WsGatewayOptions {
  handler: RpcHandler;
  /** Static and resource keys, and whether a key is required (shared with the HTTP edge). */
  auth: GatewayAuth;
  /** The gateway keys: their connections end when the key stops being usable. */
  keys?: GatewayKeyTable | undefined;
  /** `gateway.trusted_proxies`: the client address (http/client-address.ts) keys rate limit and per-client count. */
  trustedProxies: AddressRanges | undefined;
  /** The subscription hub eth_subscribe and eth_unsubscribe go to. */
  hub: Subscriptions;
  limits: WsLimits & { max_connections_per_client: number };
  /** gateway.max_body_bytes: a larger message closes the connection with 1009. */
  maxBodyBytes: number;
  metrics: WsMetrics;
  /** `gateway.access_log`: the handshake's line and each message's. */
  accessLog?: AccessLog | undefined;
  clock: Clock;
  logger: Logger;
}

/** The request fields `ws` reads in handleUpgrade, taken from the exchange. */
const WS_HEADERS = [
  'upgrade',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-protocol',
  'sec-websocket-extensions',
  'origin',
] as const;

/** An admitted handshake: its network, who the client is (key id, else address), and the 101's extra headers. */
interface Handshake {
  readonly network: string;
  readonly client: string;
  /** The remote address (behind trusted proxies: the one they name), recorded with each transaction sent. */
  readonly address: string;
  readonly key: string | undefined;
  readonly extra: Readonly<Record<string, string>>;
}

export class WsGateway {
  #options: WsGatewayOptions;
  readonly #server: WebSocketServer;
  readonly #connections = new Set<WsConnection>();
  /** Open connections per client (API key, else client address: http/client-address.ts). */
  readonly #perClient = new Map<string, number>();
  /** Set by close(): a handshake arriving later (on a keep-alive connection) is dropped. */
  #closing = false;
  /** Open connections of gateway keys, with the key (id and value digest) each was opened with. */
  readonly #keyed = new Map<WsConnection, { id: string; digest: string; network: string }>();
  readonly #unsubscribe: (() => void) | undefined;

  constructor(options: WsGatewayOptions) {
    this.#options = options;
    // Pongs are sent by the connection (connection.ts): counted against the ping rate, and only while open.
    this.#server = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxBodyBytes,
      clientTracking: false,
      autoPong: false,
    });
    // The deprecation headers travel on the request object to the 101 answer.
    this.#server.on('headers', (headers, req) => {
      const extra = (req as unknown as { extra?: Record<string, string> }).extra ?? {};
      for (const name in extra) headers.push(`${name}: ${extra[name]}`);
    });
    const keys = options.keys;
    this.#unsubscribe = keys?.onChange(() => {
      for (const [connection, opened] of this.#keyed) {
        const reason = revoked(keys.byId(opened.id), opened);
        if (reason === undefined) continue;
        this.#keyed.delete(connection);
        void connection.shutdown(CLOSE_KEY_REVOKED, reason);
      }
    });
  }

  /** Reloaded limits, for the next handshake (see the header). */
  reconfigure(settings: Pick<WsGatewayOptions, 'limits' | 'maxBodyBytes'>): void {
    this.#options = { ...this.#options, ...settings };
    this.#server.options.maxPayload = settings.maxBodyBytes;
  }

  /** The http1 upgrade hook (Http1App.upgrade). */
  upgrade(ex: ServerExchange, socket: Socket, rest: Buffer): void {
    socket.on('error', () => socket.destroy());
    if (this.#closing) {
      socket.destroy();
      return;
    }
    let admitted: Handshake;
    const trace = new RequestTrace(requestIdOf(ex.header(REQUEST_ID_HEADER)), this.#options.logger);
    const started = this.#options.clock.monotonic();
    const handshakeLine = (status: number, bytesOut: number) => {
      const seconds = (this.#options.clock.monotonic() - started) / 1000;
      this.#options.accessLog?.write(trace, { transport: 'ws', status, seconds, bytesOut });
    };
    try {
      admitted = this.#admit(ex, trace);
    } catch (err) {
      const error = asSwitchyardError(err, trace.logger);
      trace.error(error.spec.rpc ?? -32603);
      handshakeLine(error.httpStatus, refuse(socket, error, trace.id));
      return;
    }
    const { network, client, address, key, extra } = admitted;
    this.#count(client, 1);
    const headers: Record<string, string> = {};
    for (const name of WS_HEADERS) {
      const value = ex.header(name);
      if (value !== undefined) headers[name] = value;
    }
    const req = { method: ex.method, url: ex.target, headers, socket, extra };
    let accepted = false;
    socket.once('close', () => {
      // A handshake `ws` refused (bad key or version: it answers 400 itself) never became a connection.
      if (!accepted) this.#count(client, -1);
    });
    // biome-ignore lint/suspicious/noExplicitAny: ws reads only the fields set above from its IncomingMessage.
    this.#server.handleUpgrade(req as any, socket, rest, (ws) => {
      accepted = true;
      handshakeLine(101, 0);
      const connection = new WsConnection(ws, {
        handler: this.#options.handler,
        network,
        client,
        address,
        key,
        connectionId: trace.id,
        hub: this.#options.hub,
        limits: this.#options.limits,
        metrics: this.#options.metrics,
        accessLog: this.#options.accessLog,
        clock: this.#options.clock,
        logger: this.#options.logger.child({ connection_id: trace.id }),
      });
      this.#connections.add(connection);
      const record = this.#options.keys?.byId(client);
      if (record !== undefined) this.#keyed.set(connection, { id: record.id, digest: record.digest, network });
      connection.closed.then(() => {
        this.#connections.delete(connection);
        this.#keyed.delete(connection);
        this.#count(client, -1);
      });
    });
    socket.resume();
  }

  /**
   * The handshake's checks, in order: path (404), method (405), network (404 / 410, before any key
   * check, as over HTTP: SPEC §15), key (401 / 403), rate limit (429), connections per client.
   * Throws the refusal.
   */
  #admit(ex: ServerExchange, trace: RequestTrace): Handshake {
    const match = GATEWAY_PATH.exec(ex.target);
    if (!match) {
      throw new SwitchyardError(
        'NOT_FOUND',
        `No such path ${echoedPath(ex.target)}; WebSocket clients connect to /v1/{network}.`,
      );
    }
    if (ex.method !== 'GET') {
      throw new SwitchyardError('HTTP_METHOD_NOT_ALLOWED', `A WebSocket handshake is a GET, not ${ex.method}.`, {
        headers: { allow: 'GET' },
      });
    }
    const network = decodeNetwork(match[1] as string);
    trace.network = network;
    const extra = { ...this.#options.handler.networkHeaders(network), [REQUEST_ID_HEADER]: trace.id };
    const key = this.#options.auth.authenticate(ex.header('authorization'), ex.target, network);
    trace.key = key;
    const address = exchangeClient(ex, this.#options.trustedProxies);
    const client = key ?? address;
    this.#options.handler.admit(client);
    const limit = this.#options.limits.max_connections_per_client;
    if ((this.#perClient.get(client) ?? 0) >= limit) {
      throw new SwitchyardError(
        'WS_CONNECTION_LIMIT',
        `This client holds ${limit} WebSocket connections (gateway.websocket.max_connections_per_client); close some first.`,
        { details: { max_connections_per_client: limit } },
      );
    }
    return { network, client, address, key, extra };
  }

  /** Answers in flight go out, then every connection closes with 1001. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#unsubscribe?.();
    await Promise.all([...this.#connections].map((connection) => connection.shutdown()));
  }

  #count(client: string, delta: 1 | -1): void {
    const next = (this.#perClient.get(client) ?? 0) + delta;
    if (next <= 0) this.#perClient.delete(client);
    else this.#perClient.set(client, next);
  }
}

/** Why a connection opened with a key may no longer use it (a close reason: at most 123 bytes), if so. */
function revoked(now: GatewayKeyRecord | undefined, opened: { digest: string; network: string }): string | undefined {
  if (now === undefined) return 'gateway key revoked';
  if (now.digest !== opened.digest) return 'gateway key rolled: reconnect with the new value';
  // Network names are at most 64 characters (config/schema.ts): the reason fits.
  if (now.networks !== null && !now.networks.includes(opened.network)) {
    return `gateway key no longer allows network ${opened.network}`;
  }
  return undefined;
}

/**
 * The handshake's refusal: the HTTP answer with the JSON-RPC error body (with the request id), then the
 * connection ends. Returns the body's length.
 */
function refuse(socket: Socket, err: SwitchyardError, requestId: string): number {
  const body = errorResponse(err, undefined, requestId);
  const lines = [
    `HTTP/1.1 ${err.httpStatus} ${STATUS_CODES[err.httpStatus] ?? ''}`,
    'content-type: application/json',
    `content-length: ${body.length}`,
    'connection: close',
    `${REQUEST_ID_HEADER}: ${requestId}`,
  ];
  for (const name in err.headers) lines.push(`${name}: ${err.headers[name]}`);
  socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]));
  return body.length;
}
