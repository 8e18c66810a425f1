/**
 * An attempt's outcome as `switchyard_origin_requests_total{outcome}` counts it (SPEC §16), from what the
 * failsafe engine (failsafe/engine.ts) made of it:
 *   ok            the origin answered with a `result` (an upstream batch: with its array of answers)
 *   error_answer  the origin answered with its own JSON-RPC `error` (passed through to the client)
 *   timeout       no answer within the attempt's deadline
 *   connect       the connection was refused, never made, reset or broken mid-exchange
 *   http_status   an HTTP status that fails the attempt (5xx, 401, 403, 407, 408)
 *   bad_answer    an unparsable body, an answer to another id, malformed HTTP framing, or an answer the
 *                 chain checks found other than asked (SPEC §20: another hash, a head above the ceiling),
 *                 or one that failed verification (SPEC §18)
 *   throttled     HTTP 429 or a provider's rate-limit answer (an upstream batch: some of its elements)
 * An attempt stopped because the client left is not counted, nor `busy` (the gateway's own capacity:
 * `switchyard_gateway_upstream_attempts_total{result="busy"}` counts those), nor `unanchored` (no
 * trusted block to verify against: no origin's fault).
 */
import type { AttemptFailure, FailureKind } from './attempt-failure.js';
import type { FailsafeEvent } from './failsafe/rules.js';

export type OriginOutcome = 'ok' | 'error_answer' | 'timeout' | 'connect' | 'http_status' | 'bad_answer' | 'throttled';

export const ORIGIN_OUTCOMES: readonly OriginOutcome[] = [
  'ok',
  'error_answer',
  'timeout',
  'connect',
  'http_status',
  'bad_answer',
  'throttled',
];

const BY_KIND: Readonly<Record<FailureKind, OriginOutcome | undefined>> = {
  connect: 'connect',
  timeout: 'timeout',
  network: 'connect',
  status: 'http_status',
  garbled: 'bad_answer',
  throttled: 'throttled',
  busy: undefined,
  unverified: 'bad_answer',
  unanchored: undefined,
};

/** The answer's member, when the attempt's result is one call's answer. */
interface Answered {
  readonly outcome?: { readonly key: string } | undefined;
}

/** An answered attempt's outcome, by the engine's event for it and the answer itself. */
export function answerOutcome(event: FailsafeEvent, reply: unknown): OriginOutcome {
  if (event === 'bad') return 'bad_answer';
  if (event === 'partly-throttled') return 'throttled';
  return (reply as Answered | undefined)?.outcome?.key === 'error' ? 'error_answer' : 'ok';
}

/** A failed attempt's outcome (undefined: not counted). */
export function failureOutcome(failure: AttemptFailure): OriginOutcome | undefined {
  if (
    failure.kind === 'network' &&
    (failure.cause as { code?: unknown } | undefined)?.code === 'ORIGIN_MALFORMED_RESPONSE'
  ) {
    return 'bad_answer';
  }
  return BY_KIND[failure.kind];
}
