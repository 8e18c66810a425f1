/**
 * The gateway's access log (SPEC §16), `gateway.access_log`: `off`, `errors` (the default) or `all`.
 * One line per HTTP request (WebSocket handshakes included) and per WebSocket message (a call or a
 * batch), written as an `info` record `access` of the logger (`part: "access"`, so JSON or pretty as
 * `log_format` says, on stderr, and none at `log_level` warn or above) once the answer has gone:
 *
 *   request_id, transport (http | ws), network (as the path named it), key (a gateway key's id, or
 *   `static:` and a digest for a static key; null when anonymous — never the key), methods (the first
 *   10 names, in request order) and more_methods (how many more), status (the HTTP status; for a
 *   WebSocket message, the status the same body would have had over HTTP), error_codes (JSON-RPC codes
 *   of the errors the gateway answered), duration_ms, origins (`pool/origin` per attempt, in order),
 *   bytes_in and bytes_out (body bytes), and connection_id (a WebSocket message: its handshake's id).
 *
 * `errors` writes the line of a request whose status is ≥ 400 or whose answer holds an error the gateway
 * made; an origin's own error answer passing through is no such error. A request whose client left
 * before its answer was written has no line. With `off` nothing is built; with `errors`, a line only
 * for those requests. A config reload (SPEC §15) changes the mode for the requests answered from then on
 * (`setMode`).
 */
import type { Logger } from '../../log.js';
import type { RequestTrace } from '../rpc/request-trace.js';

export type AccessLogMode = 'off' | 'errors' | 'all';

/** What a finished request adds to its trace for the line. */
export interface Finished {
  readonly transport: 'http' | 'ws';
  readonly status: number;
  readonly seconds: number;
  readonly bytesOut: number;
  /** A WebSocket message's connection (its handshake's request id). */
  readonly connectionId?: string | undefined;
}

export class AccessLog {
  #mode: AccessLogMode;
  readonly #logger: Logger;

  constructor(mode: AccessLogMode, logger: Logger) {
    this.#mode = mode;
    this.#logger = logger.child({ part: 'access' });
  }

  /** A reloaded `gateway.access_log`. */
  setMode(mode: AccessLogMode): void {
    this.#mode = mode;
  }

  /** The request's line, when the mode asks for one. */
  write(trace: RequestTrace, done: Finished): void {
    if (this.#mode === 'off') return;
    if (this.#mode === 'errors' && done.status < 400 && trace.codes.length === 0) return;
    this.#logger.info('access', {
      request_id: trace.id,
      transport: done.transport,
      network: trace.network,
      key: trace.key ?? null,
      methods: trace.methods,
      ...(trace.moreMethods > 0 && { more_methods: trace.moreMethods }),
      status: done.status,
      error_codes: trace.codes,
      duration_ms: Math.round(done.seconds * 1e6) / 1e3,
      origins: trace.origins,
      bytes_in: trace.bytesIn,
      bytes_out: done.bytesOut,
      ...(done.connectionId !== undefined && { connection_id: done.connectionId }),
    });
  }
}
