/**
 * The gateway's HTTP edge: what happens to a request before it is JSON-RPC, and to an answer after.
 * Checks, in this order, each with its catalog error:
 *   path (404; `/healthz` and `/readyz` are answered first: probes.ts) → HTTP method (405 + Allow: POST;
 *   a GET is told that WebSocket needs `Upgrade: websocket`) → key (key-auth.ts: 401 for a missing
 *   required key or a bad one, 403 for a gateway key outside its networks), only for a network that is
 *   configured and not retired → Content-Type (415) → body size (413, enforced by the listener while
 *   reading) → the JSON-RPC handler (rpc/handler.ts) for the network named by the path, which answers an
 *   unknown network 404 and a retired one 410 (with the request's id) whatever key came with it.
 * Browsers are served: CORS preflights (OPTIONS with Access-Control-Request-Method) get 204, and every
 * response allows any origin (the gateway holds no cookies; API keys are explicit).
 *
 * Synchronous until something must wait (the body still arriving, an origin): a request whose body is in
 * and whose answer is cached is answered without a promise or microtask on the way.
 *
 * Every request gets a RequestTrace (rpc/request-trace.ts) with its id: the client's `X-Request-Id` when
 * usable, else a new one (model/request-id.ts). It rides in the exchange's `data`: every answer carries
 * the id (respond.ts), the handler and forwarding fill the trace in, and once the answer is written the
 * access log (access-log.ts) gets its line.
 */
import { SwitchyardError } from '../../errors/base.js';
import type { Http1App, RequestRefusal, ServerExchange } from '../../http1/index.js';
import type { Logger } from '../../log.js';
import type { AddressRanges } from '../../model/ip-address.js';
import { REQUEST_ID_HEADER, requestIdOf } from '../../model/request-id.js';
import type { GatewayMetrics } from '../metrics.js';
import type { RpcHandler } from '../rpc/handler.js';
import type { HttpAnswer } from '../rpc/http-answer.js';
import { RequestTrace } from '../rpc/request-trace.js';
import type { AccessLog } from './access-log.js';
import { exchangeClient } from './client-address.js';
import type { GatewayAuth } from './key-auth.js';
import { echoedPath, edgeError, sendBody, sendError, sendStream, traceOf } from './respond.js';

export interface EdgeOptions {
  handler: RpcHandler;
  /** Static and resource keys, and whether a key is required (shared with the WebSocket handshake). */
  auth: GatewayAuth;
  metrics: GatewayMetrics;
  logger: Logger;
  /** `gateway.access_log`: one line per request, as its mode says. */
  accessLog?: AccessLog | undefined;
  /** `gateway.trusted_proxies` (undefined when none): whose forwarding headers name the client. */
  trustedProxies: AddressRanges | undefined;
  /** `GET /healthz` and `GET /readyz` (probes.ts); answered before the path check, without key or limit. */
  probes?: (ex: ServerExchange) => boolean;
  /** `gateway.stream_stall_timeout`, for the log line of a cut stream. */
  streamStallMs: number;
  /** WebSocket handshakes (`GET /v1/{network}` with `Upgrade: websocket`): ws/upgrade.ts. Other Upgrade
   * requests (e.g. `h2c`) are ordinary HTTP requests. */
  upgrade?: Http1App['upgrade'];
}

/** `/v1/{network}`, with an optional trailing slash and query; shared with the WebSocket handshake (ws/). */
export const GATEWAY_PATH = /^\/v1\/([^/?#]+)\/?(?:\?.*)?$/;
/** The only protocol the upgrade hook takes. */
const WS_PROTOCOLS = ['websocket'] as const;
const JSON_TYPES = new Set(['application/json', 'application/json-rpc']);
const CORS = { 'access-control-allow-origin': '*' };
const PREFLIGHT = {
  ...CORS,
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'content-type, authorization',
  'access-control-max-age': '86400',
};

/** The listener's application: every request through the checks above, every refusal answered. */
export function gatewayEdge(options: EdgeOptions): Http1App {
  const { handler, auth, metrics, logger } = options;

  const handle = (
    ex: ServerExchange,
    match: RegExpExecArray | null,
    trace: RequestTrace,
  ): Promise<void> | undefined => {
    const path = onToNetwork(ex, match, options.probes);
    if (path === undefined) return undefined;
    const network = decodeNetwork(path[1] as string);
    trace.network = network;
    // An unknown or retired network is answered 404 / 410 by the handler before any key check: network
    // names are no secret, and a key's scope only concerns networks that are served (SPEC §15).
    const key = handler.serves(network) ? auth.authenticate(ex.header('authorization'), ex.target, network) : undefined;
    trace.key = key;
    const type = mediaType(ex.header('content-type'));
    if (!JSON_TYPES.has(type)) {
      throw new SwitchyardError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Content-Type ${type === '' ? '(none)' : JSON.stringify(type)} is not supported; send Content-Type: application/json.`,
      );
    }
    // The listener enforces max_body_bytes while reading (a RequestRefusal → BODY_TOO_LARGE, 413).
    const body = ex.bodyIfComplete();
    if (body === undefined) return ex.readBody().then((late) => respond(ex, network, late, key, trace));
    return respond(ex, network, body, key, trace);
  };

  const respond = (
    ex: ServerExchange,
    network: string,
    body: Buffer,
    key: string | undefined,
    trace: RequestTrace,
  ): Promise<void> | undefined => {
    trace.bytesIn = body.length;
    // The client's signal (a GoneSignal, made by the exchange on first use) tells forwarding when to stop.
    const address = exchangeClient(ex, options.trustedProxies);
    const answer = handler.handle(network, body, key ?? address, () => ex.signal(), undefined, trace, address);
    if (answer instanceof Promise) return answer.then((late) => send(ex, late));
    send(ex, answer);
    return undefined;
  };

  return {
    request: (ex) => {
      // The path is matched once per request; its network labels the request's metric.
      const match = GATEWAY_PATH.exec(ex.target);
      ex.tag = match?.[1] ?? '';
      const trace = new RequestTrace(requestIdOf(ex.header(REQUEST_ID_HEADER)), logger);
      ex.data = trace;
      try {
        handle(ex, match, trace)?.catch((err: unknown) => fail(ex, err, logger));
      } catch (err) {
        fail(ex, err, logger);
      }
    },
    refused: (ex: ServerExchange, err: RequestRefusal) => {
      // A request whose head did not parse was never traced: it gets an id of its own here.
      ex.data ??= new RequestTrace(requestIdOf(ex.header(REQUEST_ID_HEADER)), logger);
      fail(ex, err, logger);
    },
    // Taken when the answer was handed to the socket in full.
    answered: (ex) => accountFor(ex, metrics, options.accessLog),
    ...(options.upgrade !== undefined && { upgrade: options.upgrade, upgradeProtocols: WS_PROTOCOLS }),
    streamCut: () => {
      metrics.streamCut();
      logger.debug('streamed answer cut: the client took no bytes for gateway.stream_stall_timeout', {
        stream_stall_timeout_ms: options.streamStallMs,
      });
    },
  };
}

/**
 * Path (404; the probes first), CORS preflight (204) and HTTP method (405): the gateway path's match
 * when the request goes on to a network, undefined when it was answered here.
 */
function onToNetwork(
  ex: ServerExchange,
  match: RegExpExecArray | null,
  probes: EdgeOptions['probes'],
): RegExpExecArray | undefined {
  if (!match) {
    if (probes?.(ex)) return undefined;
    throw new SwitchyardError(
      'NOT_FOUND',
      `No such path ${echoedPath(ex.target)}; send JSON-RPC to POST /v1/{network}.`,
    );
  }
  if (ex.method === 'OPTIONS' && ex.header('access-control-request-method') !== undefined) {
    sendBody(ex, 204, undefined, PREFLIGHT);
    return undefined;
  }
  if (ex.method !== 'POST') {
    throw new SwitchyardError(
      'HTTP_METHOD_NOT_ALLOWED',
      ex.method === 'GET'
        ? 'HTTP GET is not supported here; send JSON-RPC with POST. WebSocket clients must send Upgrade: websocket (and Connection: Upgrade).'
        : `HTTP ${ex.method} is not supported here; send JSON-RPC with POST.`,
      { headers: { allow: 'POST' } },
    );
  }
  return match;
}

/** An answer written in full: the request's metric, and its access-log line. */
function accountFor(ex: ServerExchange, metrics: GatewayMetrics, accessLog: AccessLog | undefined): void {
  const seconds = ex.elapsedMs() / 1000;
  metrics.request(ex.tag, ex.status, seconds);
  const trace = traceOf(ex);
  // Health probes answered (no gateway path, no error) would only fill the log.
  if (trace !== undefined && (ex.tag !== '' || ex.status >= 400)) {
    accessLog?.write(trace, { transport: 'http', status: ex.status, seconds, bytesOut: ex.bytesOut });
  }
}

/** The answer with CORS, then its own headers, as two lists: no merged object per request. */
function send(ex: ServerExchange, answer: HttpAnswer): void {
  if (answer.rest !== undefined && answer.body !== undefined) {
    sendStream(ex, answer.status, answer.body, answer.rest, answer.length, CORS, answer.headers);
  } else {
    sendBody(ex, answer.status, answer.body, CORS, answer.headers);
  }
}

/** The error answer; its log line (if any) carries the request's id. */
function fail(ex: ServerExchange, err: unknown, logger: Logger): void {
  sendError(ex, edgeError(err, traceOf(ex)?.logger ?? logger), undefined, CORS);
}

/** The media type of a Content-Type value, lower-cased, without parameters ('' when absent). */
function mediaType(value: string | undefined): string {
  if (value === undefined) return '';
  // The usual value as clients send it, without splitting or new strings.
  if (value === 'application/json') return value;
  return value.split(';')[0]?.trim().toLowerCase() ?? '';
}

/** The network segment of the path, percent-decoded; a malformed escape is kept as written (then unknown). */
export function decodeNetwork(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
