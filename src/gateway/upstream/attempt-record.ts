/**
 * What each attempt's outcome leaves behind (origin-forwarder.ts, upstream-batch.ts): the attempt list the
 * client's error is built from, the attempt metric, the origin feedback (routing/feedback.ts: demotion
 * and the HealthView; never for the gateway's own capacity, `busy`) and the log line.
 */
import type { Logger } from '../../log.js';
import type { OriginFeedback } from '../../routing/feedback.js';
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

/** Records a failed attempt: in `attempts`, metrics, the origin feedback (routing/feedback.ts) and the log. */
export function recordFailure(
  deps: AttemptRecordDeps,
  candidate: Candidate,
  err: unknown,
  network: string,
  method: string,
  attempts: Attempt[],
): AttemptFailure {
  const failure =
    err instanceof AttemptFailure
      ? err
      : new AttemptFailure('network', (err as Error).message ?? String(err), { cause: err });
  const { pool, origin } = candidate;
  attempts.push({ pool: pool.name, origin: origin.name, reason: failure.message, kind: failure.kind });
  deps.metrics?.attempt(network, failure.kind);
  if (failure.kind === 'busy') {
    // The gateway's own capacity, not the origin's health: no feedback, no warning per call
    // (switchyard_gateway_upstream_attempts_total{result="busy"} counts them).
    deps.logger.debug('gateway busy', {
      network,
      method,
      pool: pool.name,
      origin: origin.name,
      reason: failure.message,
    });
    return failure;
  }
  deps.feedback.failed(candidate, failure.kind, failure.message);
  deps.logger.warn('origin attempt failed', {
    network,
    method,
    pool: pool.name,
    origin: origin.name,
    kind: failure.kind,
    reason: failure.message,
  });
  return failure;
}
