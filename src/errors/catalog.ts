/**
 * The one error catalog. Every error Switchyard puts on the wire is listed here with a stable string
 * code, its HTTP status, and its JSON-RPC code (gateway) or Cloudflare v4 code (management API).
 * `docs/errors.md` documents each entry; `src/errors/catalog.test.ts` fails when the two drift apart.
 *
 * Add an entry here, then throw `new SwitchyardError('CODE', message, { details })`. The wire format
 * is built in exactly one place per surface: `gateway/http/respond.ts` (JSON-RPC) and `api/envelope.ts` (v4).
 */

export interface ErrorSpec {
  /** HTTP status the response carries. */
  readonly http: number;
  /** JSON-RPC error code (gateway errors). */
  readonly rpc?: number;
  /** Cloudflare v4 error code (management API errors). */
  readonly v4?: number;
  /** One-line description for docs and for errors thrown without a message. */
  readonly summary: string;
}

export const CATALOG = {
  // ── Gateway: request shape ────────────────────────────────────────────────────────────────────
  RPC_PARSE_ERROR: { http: 400, rpc: -32700, summary: 'The request body is not valid JSON.' },
  RPC_INVALID_REQUEST: {
    http: 400,
    rpc: -32600,
    summary: 'The body is not a valid JSON-RPC 2.0 request object.',
  },
  RPC_EMPTY_BATCH: { http: 400, rpc: -32600, summary: 'The batch array is empty.' },
  RPC_TOO_DEEP: {
    http: 400,
    rpc: -32600,
    summary: 'The body nests arrays and objects more than 64 levels deep; refused before any origin is asked.',
  },
  RPC_INVALID_BATCH_ELEMENT: {
    http: 200,
    rpc: -32600,
    summary: 'One element of a batch is not a valid request; only that element fails.',
  },
  RPC_METHOD_NOT_ALLOWED: {
    http: 200,
    rpc: -32601,
    summary: 'The method exists but this network does not allow it (e.g. admin_, debug_, eth_subscribe over HTTP).',
  },
  RPC_METHOD_NOT_FOUND: { http: 200, rpc: -32601, summary: 'The method is not a known execution-API method.' },
  RPC_INVALID_PARAMS: { http: 200, rpc: -32602, summary: 'The params of a checked method are invalid.' },
  LOGS_RANGE_TOO_LARGE: {
    http: 200,
    rpc: -32005,
    summary: 'An eth_getLogs or eth_newFilter range spans more blocks than networks.{name}.max_logs_block_range.',
  },
  HTTP_METHOD_NOT_ALLOWED: {
    http: 405,
    rpc: -32600,
    summary: 'Only POST is accepted; the response carries Allow: POST.',
  },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, rpc: -32600, summary: 'Content-Type must be application/json.' },
  BODY_TOO_LARGE: { http: 413, rpc: -32005, summary: 'The body is larger than gateway.max_body_bytes.' },
  BATCH_TOO_LARGE: { http: 413, rpc: -32005, summary: 'The batch has more elements than gateway.max_batch.' },
  RATE_LIMITED: { http: 429, rpc: -32005, summary: 'The client exceeded its rate limit; see Retry-After.' },
  WS_SUBSCRIPTION_LIMIT: {
    http: 429,
    rpc: -32005,
    summary: 'The WebSocket connection holds gateway.websocket.max_subscriptions_per_connection subscriptions already.',
  },
  WS_CONNECTION_LIMIT: {
    http: 429,
    rpc: -32005,
    summary: 'The client holds gateway.websocket.max_connections_per_client WebSocket connections already.',
  },
  GATEWAY_UNAUTHORIZED: {
    http: 401,
    rpc: -32003,
    summary:
      'No key where one is required (gateway.api_keys, gateway.require_key), or an unknown, disabled or deleted key.',
  },
  KEY_NETWORK_FORBIDDEN: {
    http: 403,
    rpc: -32003,
    summary: "The gateway key may not call this network (outside the key's networks).",
  },
  KEY_QUOTA_EXCEEDED: {
    http: 429,
    rpc: -32005,
    summary: 'The gateway key used its daily_quota for this UTC day; Retry-After says when the next day starts.',
  },
  NOT_FOUND: { http: 404, rpc: -32600, summary: 'No such path; JSON-RPC is served at POST /v1/{network}.' },
  // ── Gateway: HTTP framing (the listener, gateway/wire) ─────────────────────────────────────────
  HTTP_BAD_REQUEST: {
    http: 400,
    rpc: -32600,
    summary:
      'The HTTP request is malformed (bare LF, obs-fold, bad Content-Length, CL with TE…); the connection closes.',
  },
  HTTP_HEADERS_TOO_LARGE: {
    http: 431,
    rpc: -32600,
    summary: 'The request head is over 16 KiB or has over 100 header lines; the connection closes.',
  },
  HTTP_NOT_IMPLEMENTED: {
    http: 501,
    rpc: -32600,
    summary: 'A Transfer-Encoding other than chunked alone; the connection closes.',
  },
  HTTP_REQUEST_TIMEOUT: {
    http: 408,
    rpc: -32600,
    summary: 'The request (head and body) did not arrive within the request timeout; the connection closes.',
  },
  // ── Gateway: networks ─────────────────────────────────────────────────────────────────────────
  NETWORK_UNKNOWN: { http: 404, rpc: -32001, summary: 'The network in the path is not configured.' },
  NETWORK_RETIRED: {
    http: 410,
    rpc: -32001,
    summary: 'The network was retired; data carries retired_on and replacement.',
  },
  // ── Gateway: upstream ─────────────────────────────────────────────────────────────────────────
  NO_HEALTHY_ORIGIN: { http: 503, rpc: -32002, summary: 'No pool of the network has a healthy origin.' },
  UPSTREAM_FAILED: { http: 502, rpc: -32002, summary: 'Every origin tried failed (connection error, 5xx, bad body).' },
  UPSTREAM_TIMEOUT: { http: 504, rpc: -32002, summary: 'Every origin tried timed out.' },
  UPSTREAM_THROTTLED: {
    http: 429,
    rpc: -32005,
    summary:
      'Every origin of the network that could take the read is throttling it (benched after a 429, or at its max_requests_per_second); Retry-After says when one is free again.',
  },
  GATEWAY_BUSY: {
    http: 503,
    rpc: -32002,
    summary:
      'No origin connection (or, for a large answer, no stream slot of this client) came free within request_timeout; never counted against the origin.',
  },
  ANSWER_UNVERIFIED: {
    http: 200,
    rpc: -32050,
    summary:
      "No origin's answer to the call could be verified against the trust anchor (networks.{name}.verify); the message names the method and block.",
  },
  GATEWAY_INTERNAL: { http: 500, rpc: -32603, summary: 'An unexpected internal error; the log has details.' },

  // ── Management API ────────────────────────────────────────────────────────────────────────────
  API_AUTH_REQUIRED: {
    http: 401,
    v4: 10000,
    summary: 'Authentication error: missing or malformed Authorization header.',
  },
  API_AUTH_INVALID: {
    http: 401,
    v4: 10000,
    summary: 'Authentication error: unknown, deleted, rolled-away, disabled, expired or not-yet-valid token.',
  },
  API_FORBIDDEN: {
    http: 403,
    v4: 10000,
    summary: 'Authentication error: the token has no access to this account, or is read-only on a write.',
  },
  API_VALIDATION: {
    http: 400,
    v4: 1002,
    summary: 'Validation failed; the message names the field and the allowed values.',
  },
  API_NOT_UNIQUE: { http: 400, v4: 1003, summary: 'A value that must be unique is already used (e.g. pool name).' },
  API_IN_USE: { http: 400, v4: 1002, summary: 'The object is still used by another object, which the message names.' },
  API_NOT_FOUND: { http: 404, v4: 7003, summary: 'No such route or object.' },
  API_METHOD_NOT_ALLOWED: { http: 405, v4: 10405, summary: 'The HTTP method is not supported on this route.' },
  API_UNSUPPORTED_MEDIA_TYPE: { http: 415, v4: 10415, summary: 'Request bodies must be application/json.' },
  API_BODY_TOO_LARGE: { http: 413, v4: 10413, summary: 'The request body is too large.' },
  API_WEBHOOK_TEST_FAILED: {
    http: 400,
    v4: 17000,
    summary: 'The test message to a webhook destination did not get a 2xx answer.',
  },
  API_INTERNAL: { http: 500, v4: 10001, summary: 'An unexpected internal error; the log has details.' },
  SECRETS_KEY_STALE: {
    http: 503,
    v4: 10503,
    summary: "The store's secrets were re-encrypted under a key this process does not hold; restart it with that key.",
  },

  // ── Config and CLI (never on the wire; exit code 2) ───────────────────────────────────────────
  CONFIG_INVALID: { http: 500, summary: 'The configuration is invalid; the message names the key and the file.' },
  CONFIG_UNKNOWN_KEY: { http: 500, summary: 'The configuration has a key Switchyard does not know.' },
  CONFIG_ENV_MISSING: { http: 500, summary: 'The configuration refers to an environment variable that is not set.' },
  CONFIG_FILE_UNREADABLE: { http: 500, summary: 'The configuration file cannot be read or parsed as YAML.' },
  CLI_USAGE: { http: 500, summary: 'The command line is invalid; the message says what was expected.' },
  CONFIG_SECRETS_KEY: {
    http: 500,
    summary: "The secrets key is missing, malformed or not the store's key; the message names the file or variable.",
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof CATALOG;
