/**
 * An attempt's outcome as `switchyard_origin_requests_total{outcome}` counts it (SPEC §16):
 *   ok            the origin answered with a `result` (an upstream batch: with an array of answers)
 *   error_answer  the origin answered with its own JSON-RPC `error` (passed through to the client)
 *   timeout       no answer within the attempt's deadline
 *   connect       the connection was refused, never made, reset or broken mid-exchange
 *   http_status   an HTTP status that fails the attempt (5xx, 401, 403, 407, 408)
 *   bad_answer    an unparsable body, an answer to another id, or malformed HTTP framing
 *   throttled     HTTP 429 (or a provider's rate-limit answer, where the forwarding rules tell one)
 * An attempt stopped because the client left is not counted, nor `busy` (the gateway's own capacity:
 * `switchyard_gateway_upstream_attempts_total{result="busy"}` counts those).
 */
import { AttemptFailure, type FailureKind } from './attempt-failure.js';

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
  busy: undefined,
};

/** The answer's member, when the attempt's result is one call's answer. */
interface Answered {
  readonly outcome?: { readonly key: string } | undefined;
}

/** A successful attempt's outcome: `error_answer` when its answer holds the origin's `error`. */
export function answerOutcome(result: unknown): OriginOutcome {
  return (result as Answered | undefined)?.outcome?.key === 'error' ? 'error_answer' : 'ok';
}

/**
 * A failed attempt's outcome (undefined: not counted). `status` is the origin's HTTP status when one
 * came back.
 */
export function failureOutcome(err: unknown, status: number | undefined): OriginOutcome | undefined {
  if (!(err instanceof AttemptFailure)) return 'connect';
  if (err.kind === 'status' && status === 429) return 'throttled';
  if (err.kind === 'network' && (err.cause as { code?: unknown } | undefined)?.code === 'ORIGIN_MALFORMED_RESPONSE') {
    return 'bad_answer';
  }
  return BY_KIND[err.kind];
}
