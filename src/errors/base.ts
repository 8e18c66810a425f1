import { CATALOG, type ErrorCode, type ErrorSpec } from './catalog.js';

export interface SwitchyardErrorOptions {
  /** Structured details; JSON-RPC `data` on the gateway. Never put secrets here. */
  details?: unknown;
  cause?: unknown;
  /** Extra HTTP response headers (e.g. Allow, Retry-After). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * The base of every error that reaches a client or the operator. Handlers throw it; one formatter per
 * surface turns it into the wire shape. `message` says what to do, in one or two sentences.
 */
export class SwitchyardError extends Error {
  override readonly name = 'SwitchyardError';
  readonly code: ErrorCode;
  readonly spec: ErrorSpec;
  readonly details: unknown;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message?: string, options: SwitchyardErrorOptions = {}) {
    const spec = CATALOG[code];
    super(message ?? spec.summary, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.spec = spec;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  get httpStatus(): number {
    return this.spec.http;
  }
}

export function isSwitchyardError(err: unknown): err is SwitchyardError {
  return err instanceof SwitchyardError;
}
