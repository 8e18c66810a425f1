/**
 * What each attempt's outcome leaves behind (the failsafe engine, failsafe/engine.ts, calls these as its
 * rules say): the attempt list the client's error is built from, the attempt metric, the origin
 * feedback (routing/feedback.ts: demotion and the HealthView — only where the rule's `health` says so,
 * so never for the gateway's own capacity, `busy`, nor for throttling) and the log line.
 */
import type { Logger } from '../../log.js';
import type { OriginFailureKind, OriginFeedback } from '../../routing/feedback.js';
import type { Candidate } from '../../routing/router.js';
import type { GatewayMetrics } from '../metrics.js';
import { type Attempt, AttemptFailure } from './attempt-failure.js';

export interface AttemptRecordDeps {
  readonly feedback: OriginFeedback;
  readonly logger: Logger;
  readonly metrics?: GatewayMetrics | undefined;
}

/** An attempt answered: the metric and the origin's feedback (one call, no allocation). */
export function recordSuccess(deps: AttemptRecordDeps, network: string, candidate: Candidate): void {
  deps.metrics?.attempt(network, 'ok');
  deps.feedback.succeeded(candidate);
}

/** Any error of an attempt as its AttemptFailure (another error becomes its cause). */
export function asFailure(err: unknown): AttemptFailure {
  return err instanceof AttemptFailure
    ? err
    : new AttemptFailure('network', (err as Error).message ?? String(err), { cause: err });
}

/**
 * Records a failed attempt: in `attempts`, metrics, the log, and (when `health`) the origin feedback
 * (routing/feedback.ts).
 */
export function recordFailure(
  deps: AttemptRecordDeps,
  candidate: Candidate,
  failure: AttemptFailure,
  context: { readonly network: string; readonly method: string },
  attempts: Attempt[],
  health: boolean,
): void {
  const { network, method } = context;
  const { pool, origin } = candidate;
  attempts.push({ pool: pool.name, origin: origin.name, reason: failure.message, kind: failure.kind });
  deps.metrics?.attempt(network, failure.kind);
  const fields = { network, method, pool: pool.name, origin: origin.name, kind: failure.kind, reason: failure.message };
  // (The rules give `health` to connect, timeout and network failures only: failsafe/rules.test.ts.)
  if (health) deps.feedback.failed(candidate, failure.kind as OriginFailureKind, failure.message);
  // The gateway's own capacity, or the origin asking us to slow down: no warning per call
  // (switchyard_gateway_upstream_attempts_total{result="busy"|"throttled"} counts them).
  if (failure.kind === 'busy') deps.logger.debug('gateway busy', fields);
  else if (failure.kind === 'throttled') deps.logger.debug('origin throttled the call', fields);
  else if (failure.kind === 'unanchored') deps.logger.debug('no trusted block to verify the answer against', fields);
  else deps.logger.warn('origin attempt failed', fields);
}
