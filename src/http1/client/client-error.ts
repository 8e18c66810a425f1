/**
 * Errors of the origin HTTP client. Socket failures keep Node's own codes (ECONNREFUSED, ECONNRESET,
 * TLS verification codes, …); the client's own failures carry these codes, which origin-forwarder.ts classifies:
 *   - ORIGIN_CONNECT_TIMEOUT: no TCP (and TLS) connection within the connect timeout; no byte was sent.
 *   - ORIGIN_CONNECT_FAILED: the socket closed, without an error of its own, before it was connected.
 *   - ORIGIN_HEADERS_TIMEOUT / ORIGIN_BODY_TIMEOUT: the exchange's deadline (`timeoutMs` from dispatch)
 *     passed before the answer's head, or before its body was complete; or a kept stream's body
 *     stalled for `timeoutMs` (client-exchange.ts). A headers timeout of an exchange still queued in
 *     its pool means it was never written.
 *   - ORIGIN_MALFORMED_RESPONSE: the answer broke HTTP/1.1 framing or the parser's limits (response-parser.ts).
 *   - ORIGIN_CLOSED: the origin closed the connection before the answer was complete.
 *   - ORIGIN_POOL_CLOSED: the client was closed (shutdown, or the origin left the configuration).
 */
export type ClientErrorCode =
  | 'ORIGIN_CONNECT_TIMEOUT'
  | 'ORIGIN_CONNECT_FAILED'
  | 'ORIGIN_HEADERS_TIMEOUT'
  | 'ORIGIN_BODY_TIMEOUT'
  | 'ORIGIN_MALFORMED_RESPONSE'
  | 'ORIGIN_CLOSED'
  | 'ORIGIN_POOL_CLOSED';

export class ClientError extends Error {
  override readonly name = 'ClientError';

  constructor(
    readonly code: ClientErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A malformed answer (the connection it came on is destroyed, never reused). */
export function malformed(what: string): ClientError {
  return new ClientError('ORIGIN_MALFORMED_RESPONSE', `malformed HTTP answer: ${what}`);
}
