/**
 * One gateway request as the logs see it (SPEC §16): an HTTP request, or one WebSocket message (a call
 * or a batch). The edge that receives it makes it (http/edge.ts, ws/connection.ts) with its request id
 * (model/request-id.ts); the handler names its calls and the errors it answers, forwarding names the
 * origins it tried, and the access log (http/access-log.ts) writes it out when the answer has gone.
 *
 * Its `logger` carries `request_id` (a child of the edge's logger, made on first use, so a request that
 * logs nothing costs none): every log line about the request goes through it. `originHeader` is the
 * `X-Request-Id` header line origins get.
 *
 * What it keeps is bounded: the first MAX_METHODS method names (then a count of the rest), the first
 * MAX_CODES error codes, the first MAX_ORIGINS origins tried.
 */
import type { Logger } from '../../log.js';
import { REQUEST_ID_HEADER } from '../../model/request-id.js';

export const MAX_METHODS = 10;
export const MAX_CODES = 10;
export const MAX_ORIGINS = 10;

export class RequestTrace {
  readonly id: string;
  readonly #base: Logger;
  #logger: Logger | undefined;
  #header: string | undefined;
  /** The network named by the path (as sent: it may be unknown). */
  network = '';
  /** Who called: a gateway key's id or `static:` + a digest of a static key (never the key); else undefined. */
  key: string | undefined;
  /** Body bytes read. */
  bytesIn = 0;
  /** The first MAX_METHODS method names of the request, in request order. */
  readonly methods: string[] = [];
  /** Calls beyond MAX_METHODS. */
  moreMethods = 0;
  /** JSON-RPC codes of the errors the gateway put in the answer (never an origin's own error). */
  readonly codes: number[] = [];
  /** `pool/origin` of each attempt, in order. */
  readonly origins: string[] = [];

  constructor(id: string, logger: Logger) {
    this.id = id;
    this.#base = logger;
  }

  get logger(): Logger {
    this.#logger ??= this.#base.child({ request_id: this.id });
    return this.#logger;
  }

  /** `x-request-id: <id>\r\n`, for the request to an origin (the id holds visible ASCII only). */
  get originHeader(): string {
    this.#header ??= `${REQUEST_ID_HEADER}: ${this.id}\r\n`;
    return this.#header;
  }

  /** A call of the request, in request order. */
  method(name: string): void {
    if (this.methods.length < MAX_METHODS) this.methods.push(name);
    else this.moreMethods += 1;
  }

  /** The gateway answered a call (or the whole request) with an error of this JSON-RPC code. */
  error(code: number): void {
    if (this.codes.length < MAX_CODES) this.codes.push(code);
  }

  /** An attempt went to this origin. */
  tried(pool: string, origin: string): void {
    if (this.origins.length < MAX_ORIGINS) this.origins.push(`${pool}/${origin}`);
  }
}
