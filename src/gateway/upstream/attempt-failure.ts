/**
 * How an attempt on an origin failed, and what the client gets when every attempt did (origin-forwarder.ts).
 * Kinds: `connect` (never connected: no byte reached the origin, so even a write may go elsewhere),
 * `timeout`, `network` (the connection broke, or the answer's HTTP framing was malformed), `status`
 * (an HTTP status that means failure), `garbled` (not a JSON-RPC answer to our request), `throttled`
 * (HTTP 429, or a provider's rate-limit answer: model/rate-limit-answers.ts; with the wait it asked for,
 * and for a rate-limit answer the answer itself), `busy` (the gateway's own capacity, not the origin: no
 * origin connection came free within request_timeout, or a large answer found no stream slot of its
 * client; never reported against the origin's health), `unverified` (SPEC §18: the answer failed its
 * verification) and `unanchored` (no trusted block to check it against). What each kind leads to:
 * failsafe/rules.ts.
 * An AttemptFailure made from another error (classify()) keeps it as its `cause`, so the log shows the
 * socket or parser error behind a `connect` or `network` kind.
 */
import { SwitchyardError } from '../../errors/base.js';
import type { ClientSignal } from '../rpc/forwarder.js';

export type FailureKind =
  | 'connect'
  | 'timeout'
  | 'network'
  | 'status'
  | 'garbled'
  | 'throttled'
  | 'busy'
  | 'unverified'
  | 'unanchored';

/** What a throttled attempt brings besides its message. */
export interface ThrottleDetails {
  /** How long the origin asked us to wait (Retry-After, or the answer's own back-off), in ms. */
  readonly retryAfterMs?: number | undefined;
  /** The origin's rate-limit answer, when it came as a JSON-RPC answer (a write passes it through). */
  readonly answer?: unknown;
}

/** What an AttemptFailure may carry besides its kind and message. */
export interface FailureDetails extends ThrottleDetails {
  /** The error it was classified from (a socket, parser or address error). */
  readonly cause?: unknown;
}

export class AttemptFailure extends Error {
  override readonly name = 'AttemptFailure';
  readonly retryAfterMs: number | undefined;
  readonly answer: unknown;

  constructor(
    readonly kind: FailureKind,
    message: string,
    details?: FailureDetails,
  ) {
    super(message, details?.cause === undefined ? undefined : { cause: details.cause });
    this.retryAfterMs = details?.retryAfterMs;
    this.answer = details?.answer;
  }
}

export interface Attempt {
  pool: string;
  origin: string;
  reason: string;
  kind: FailureKind;
}

export function describeAttempts(attempts: readonly Attempt[]): string {
  return attempts.map((a) => `${a.pool}/${a.origin}: ${a.reason}`).join('; ');
}

/**
 * The client's error once the attempts ended: 503 GATEWAY_BUSY when the last one was `busy` (attempts
 * stop there: origin-forwarder.ts), else 504 when all of them timed out, else 502.
 */
export function exhausted(network: string, attempts: readonly Attempt[], writeNote = ''): SwitchyardError {
  const tried = describeAttempts(attempts);
  const details = { attempts: attempts.map(({ pool, origin, reason }) => ({ pool, origin, reason })) };
  const last = attempts[attempts.length - 1];
  if (last?.kind === 'busy') {
    return new SwitchyardError('GATEWAY_BUSY', `gateway busy: ${last.reason} (${network}); retry later.`, { details });
  }
  if (attempts.length > 0 && attempts.every((a) => a.kind === 'timeout')) {
    return new SwitchyardError(
      'UPSTREAM_TIMEOUT',
      `Every origin tried for ${network} timed out (${tried}); retry later.`,
      {
        details,
      },
    );
  }
  return new SwitchyardError(
    'UPSTREAM_FAILED',
    `Every origin tried for ${network} failed (${tried || 'request aborted'}).${writeNote || ' Retry later.'}`,
    { details },
  );
}

/** Error codes that mean the connection was never established, so no request byte reached the origin. */
export const NEVER_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ORIGIN_CONNECT_TIMEOUT',
  'ORIGIN_CONNECT_FAILED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);
export const FAILING_STATUS = new Set([401, 403, 407, 408]);
/** Too Many Requests: the origin throttles us (a `throttled` failure, not a `status` one). */
export const THROTTLED_STATUS = 429;

/** Why the client's signal aborted, as an Error named AbortError (classify() reads the name). */
export function abortReason(signal: ClientSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('The client went away', 'AbortError');
}

/**
 * The exchange's deadline passed (http1/client/client-exchange.ts), or a kept stream stalled: the
 * attempt's one timer, for its one budget (request_timeout).
 */
export function timedOut(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'ORIGIN_HEADERS_TIMEOUT' || code === 'ORIGIN_BODY_TIMEOUT';
}

/**
 * An attempt's error (the http1 client's codes, Node's socket codes, the deadline, the client leaving)
 * as its kind. `busy`: the exchange was still waiting for a busy origin connection when its deadline
 * passed (upstream/origin-clients.ts `busy`).
 */
export function classify(err: unknown, timeoutMs: number, busy = false): AttemptFailure {
  const failure = (kind: FailureKind, message: string) => new AttemptFailure(kind, message, { cause: err });
  const timeout = timedOut(err);
  if (timeout && busy) return failure('busy', `no connection to the origin came free within ${timeoutMs} ms`);
  const code = (err as { code?: unknown }).code;
  // The outbound policy refused the origin's address: never connected, and the reason says why.
  if (code === 'ETARGETREFUSED') return failure('connect', `cannot connect (${(err as Error).message})`);
  if (typeof code === 'string' && NEVER_CONNECTED.has(code)) return failure('connect', `cannot connect (${code})`);
  if (timeout) return failure('timeout', `no answer within ${timeoutMs} ms`);
  if (code === 'ORIGIN_MALFORMED_RESPONSE') return failure('network', 'malformed HTTP answer');
  if ((err as Error).name === 'AbortError') return failure('network', 'client went away');
  return failure('network', typeof code === 'string' ? `connection failed (${code})` : 'connection failed');
}
