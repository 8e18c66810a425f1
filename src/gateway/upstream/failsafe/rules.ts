/**
 * The failsafe engine's rules (SPEC §17), as data: what happens after each thing an attempt can meet,
 * for reads and for writes (`eth_sendRawTransaction`, `eth_sendTransaction`; an upstream batch holds
 * only reads). The engine (engine.ts) looks every event up here and does what the row says; nothing
 * else in the loop decides. `rules.test.ts` walks the table row by row.
 *
 * Columns: `then` — the action (below); `health` — whether the origin's health hears of the attempt
 * (routing/feedback.ts: an answer as a success; a connect, timeout or network failure as a failure, a
 * connect failure also demoting the origin for a moment); `bench` — whether the origin is benched for
 * its Retry-After (routing/throttling.ts); `score` — how the attempt counts in the origin's score
 * (routing/scores/); `keep` — whether an answer that came with the event passes through when nothing
 * better comes.
 *
 * Actions: `accept` the answer (other attempts in flight are cancelled: left to finish on their
 * connection, which is then reused, or closed by their deadline); `next` — try the next origin of the
 * plan (when no other attempt is in flight); `fallback-next` — keep this answer, try the next origin;
 * `most-advanced` — keep it, try once on the most advanced origin (whose answer then passes, whatever
 * it is); `stop` — start no further attempt (one already in flight may still answer); `hedge` — send
 * the call to the next origin too and take the first good answer; `wait` — keep waiting; `skip` —
 * leave this origin out and take the next one (it does not count as an attempt).
 */
import type { ScoreOutcome } from '../../../model/origin-score.js';
import type { FailureKind } from '../attempt-failure.js';

export type FailsafeEvent =
  /** A usable answer (an origin's own JSON-RPC error included). */
  | 'answer'
  /** The chain checks (answer-checks.ts): the origin lacks the data (pruned, not synced). */
  | 'missing'
  /** The chain checks: a null or a lower head from an origin behind the chain. */
  | 'behind'
  /** The chain checks (SPEC §20): an answer other than asked (another hash, a head above the ceiling). */
  | 'bad'
  /** The same, from the most advanced origin, tried after `behind`. */
  | 'behind-again'
  /** An upstream batch answered, some elements with a rate-limit error (they go out again one by one). */
  | 'partly-throttled'
  /**
   * Failures, each kind as attempt-failure.ts describes it: connect, timeout, network, status, garbled,
   * throttled (HTTP 429 or a rate-limit answer), busy (the gateway's own capacity), unverified and
   * unanchored (SPEC §18).
   */
  | FailureKind
  /** No answer within the hedge delay (networks.{name}.hedge). */
  | 'slow'
  /** The next origin is benched or at its max_requests_per_second when the attempt would start. */
  | 'capped';

export type CallClass = 'read' | 'write';

export type FailsafeAction = 'accept' | 'next' | 'fallback-next' | 'most-advanced' | 'stop' | 'hedge' | 'wait' | 'skip';

export interface FailsafeRule {
  readonly on: FailsafeEvent;
  readonly calls: CallClass | 'any';
  readonly then: FailsafeAction;
  readonly health: boolean;
  readonly bench: boolean;
  readonly score: ScoreOutcome | 'none';
  readonly keep: boolean;
  /** Why, in a few words (docs/routing.md has the table). */
  readonly why: string;
}

const rule = (
  on: FailsafeEvent,
  calls: CallClass | 'any',
  then: FailsafeAction,
  effects: Partial<Pick<FailsafeRule, 'health' | 'bench' | 'score' | 'keep'>>,
  why: string,
): FailsafeRule => ({ on, calls, then, health: false, bench: false, score: 'none', keep: false, ...effects, why });

export const FAILSAFE_RULES: readonly FailsafeRule[] = [
  rule('answer', 'any', 'accept', { health: true, score: 'ok' }, 'the origin answered'),
  rule('missing', 'read', 'fallback-next', { health: true, score: 'ok' }, 'another origin may have the data'),
  rule('bad', 'read', 'fallback-next', { health: true, score: 'error' }, 'another origin may answer what was asked'),
  rule('behind', 'read', 'most-advanced', { health: true, score: 'ok' }, 'once more where the chain is'),
  rule('behind-again', 'read', 'accept', { health: true, score: 'ok' }, 'the most advanced origin has spoken'),
  rule('partly-throttled', 'read', 'accept', { health: true, bench: true, score: 'throttled' }, 'the rest goes alone'),
  rule('connect', 'any', 'next', { health: true, score: 'error' }, 'no byte reached the origin'),
  rule('timeout', 'read', 'next', { health: true, score: 'error' }, 'a read is safe to send again'),
  rule('timeout', 'write', 'stop', { health: true, score: 'error' }, 'the write may have arrived'),
  rule('network', 'read', 'next', { health: true, score: 'error' }, 'a read is safe to send again'),
  rule('network', 'write', 'stop', { health: true, score: 'error' }, 'the write may have arrived'),
  rule('status', 'read', 'next', { score: 'error' }, 'says nothing about reachability'),
  rule('status', 'write', 'stop', { score: 'error' }, 'the write may have arrived'),
  rule('garbled', 'read', 'next', { score: 'error' }, 'says nothing about reachability'),
  rule('garbled', 'write', 'stop', { score: 'error' }, 'the write may have arrived'),
  rule('throttled', 'read', 'next', { bench: true, score: 'throttled' }, 'the origin asked us to wait'),
  rule(
    'throttled',
    'write',
    'stop',
    { bench: true, score: 'throttled', keep: true },
    'never resent; its answer passes',
  ),
  rule('unverified', 'read', 'next', { score: 'error' }, 'another origin may tell the truth'),
  rule('unanchored', 'read', 'stop', {}, 'no origin can be checked without an anchor'),
  rule('busy', 'any', 'stop', {}, 'the wait already took request_timeout'),
  rule('slow', 'read', 'hedge', {}, 'the next origin may answer sooner'),
  rule('slow', 'write', 'wait', {}, 'a write is never sent twice'),
  rule('capped', 'any', 'skip', {}, 'never waited on'),
];

/** event → the rule for reads and for writes (looked up once per attempt: no key is built). */
const BY_EVENT = new Map<FailsafeEvent, { read?: FailsafeRule; write?: FailsafeRule }>();
for (const row of FAILSAFE_RULES) {
  const entry = BY_EVENT.get(row.on) ?? {};
  if (row.calls !== 'write') entry.read = row;
  if (row.calls !== 'read') entry.write = row;
  BY_EVENT.set(row.on, entry);
}

/** The rule for this event on this kind of call; every pair the engine meets has exactly one. */
export function ruleFor(event: FailsafeEvent, calls: CallClass): FailsafeRule {
  const found = BY_EVENT.get(event)?.[calls];
  if (found === undefined) throw new Error(`no failsafe rule for ${event} on a ${calls}`);
  return found;
}
