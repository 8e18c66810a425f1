/**
 * What one monitor check of one origin found. `failure_reason` is for people (it shows in the health
 * endpoint and in alerts): "" when the check passed. `retryable` marks transport failures (timeout,
 * refused, reset) — the only ones a check retries quickly, because a wrong status or body would not change.
 * `throttled` marks a check the origin answered with HTTP 429 or a provider's rate-limit answer
 * (model/rate-limit-answers.ts): it counts neither up nor down (round.ts keeps the origin's state).
 */
import type { ScoreOutcome } from '../../model/origin-score.js';
export interface ProbeResult {
  ok: boolean;
  failure_reason: string;
  /** HTTP status of the last response, null when none arrived. */
  response_code: number | null;
  /** Round-trip time of the (first) request in ms, null when no response arrived. */
  rtt_ms: number | null;
  /** jsonrpc monitors: the origin's head block, for the pool-wide block-lag rule. */
  block_number?: bigint;
  retryable?: boolean;
  /** Timeouts are told apart from refusals in reasons and metrics. */
  timed_out?: boolean;
  /** The origin throttled the check (SPEC §17): neither a pass nor a failure. */
  throttled?: boolean;
}

/** A check the origin throttled: `reason` plus the note that it counts neither way. */
export function throttledCheck(reason: string, response_code: number | null, rtt_ms: number | null): ProbeResult {
  return { ...failed(`${reason} (rate limited; counts neither up nor down)`, response_code, rtt_ms), throttled: true };
}

/** How a check counts in the origin's score (SPEC §17): its round trip when it passed. */
export function probeScore(result: ProbeResult): ScoreOutcome {
  return result.throttled === true ? 'throttled' : result.ok ? 'ok' : 'error';
}

export function passed(response_code: number | null, rtt_ms: number | null): ProbeResult {
  return { ok: true, failure_reason: '', response_code, rtt_ms };
}

export function failed(
  failure_reason: string,
  response_code: number | null = null,
  rtt_ms: number | null = null,
): ProbeResult {
  return { ok: false, failure_reason, response_code, rtt_ms };
}
