/**
 * What the wire layer reports when a request cannot be served at the HTTP level. It names the kind;
 * the gateway maps each kind to its catalog error in one place (respond.ts `asSwitchyardError`), so
 * the wire layer stays a plain HTTP/1.1 server and respond.ts stays the one place errors become bytes.
 */

export type RefusalKind =
  /** Malformed request line, header or chunked framing (400). */
  | 'malformed'
  /** Head over 16 KiB or over 100 header lines (431). */
  | 'head-too-large'
  /** Body over the listener's max body bytes, declared or while reading (413). */
  | 'body-too-large'
  /** A Transfer-Encoding other than `chunked` alone (501). */
  | 'unsupported-encoding'
  /** The request (head + body) did not arrive within the request timeout (408). */
  | 'timeout'
  /** The client closed the connection before sending the whole body (never answered). */
  | 'aborted';

export class RequestRefusal extends Error {
  override readonly name = 'RequestRefusal';
  readonly kind: RefusalKind;
  /** The body limit, for 'body-too-large'. */
  readonly limit: number | undefined;

  constructor(kind: RefusalKind, message: string, limit?: number) {
    super(message);
    this.kind = kind;
    this.limit = limit;
  }
}
