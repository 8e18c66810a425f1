/**
 * The failsafe engine (SPEC §17): the one attempt loop, for single calls (origin-forwarder.ts) and
 * upstream batches (upstream-batch.ts) alike. The caller gives it the call's plan (call-plan.ts), how to
 * start an attempt and how to judge an answer; the engine walks the plan and does, after each event,
 * what rules.ts says — the loop decides nothing of its own:
 *   - at most `max_attempts` attempts (gateway.max_attempts, or the method's; a hedge counts as one),
 *     each with the call's timeout; origins benched or at their cap when their turn comes are skipped
 *     (`capped`), without counting;
 *   - hedging, when the call may be hedged (a read, not a filter call) and its network or method says so:
 *     an attempt with no answer after the hedge delay (failsafe/method-rules.ts `hedgeDelay`: the
 *     origin's p90, 250 ms until it has 20 answered attempts, or a fixed duration) gets a second one on
 *     the next origin of the plan (`slow` → `hedge`), at most `hedge.max` per call; the first good
 *     answer wins and the others are abandoned (attempt.ts `abandon`): each finishes on its connection
 *     (reused afterwards) or ends at its deadline, and a late answer is discarded (a stream destroyed,
 *     closing its connection). `switchyard_hedges_total{network,outcome}` counts hedged calls that were
 *     answered: `won` when the answer came from a hedge, `lost` when the attempt it hedged answered first;
 *   - each attempt's outcome: the attempt metric, the failure list, the origin's health (rules `health`),
 *     benching (`bench`, for the Retry-After the attempt brought), and its score, statistics and
 *     per-origin series (rules `score`; origin-outcome.ts; latency from the injected Clock's monotonic
 *     time). An abandoned attempt still counts in its origin's score, statistics and series when it
 *     ends, never in its health; an attempt the client stopped by leaving counts nowhere. Lines about
 *     a client's call go to its request's logger (`FailsafeCall.trace`, with its request id).
 * When no attempt is accepted: an answer kept on the way passes through (`fallback-next`,
 * `most-advanced`, a write's rate-limit answer); else a read whose every attempt was throttled (or
 * skipped at its cap) is UPSTREAM_THROTTLED (429, Retry-After); else attempt-failure.ts `exhausted`
 * (GATEWAY_BUSY, UPSTREAM_TIMEOUT, UPSTREAM_FAILED — for a write stopped before its plan ran out, with
 * the note that it may have reached the origin).
 */
import type { Clock } from '../../../clock.js';
import type { Logger } from '../../../log.js';
import type { OriginScoreSink, OriginScoreView } from '../../../model/origin-score.js';
import type { OriginStatsSink } from '../../../model/origin-stats.js';
import type { Candidate } from '../../../routing/router.js';
import { type OriginThrottle, throttledError } from '../../../routing/throttling.js';
import type { ClientSignal } from '../../rpc/forwarder.js';
import { VERDICT_NOTES, type Verdict } from '../answer-checks.js';
import type { StartedAttempt } from '../attempt.js';
import { type Attempt, exhausted } from '../attempt-failure.js';
import { type AttemptRecordDeps, asFailure, recordFailure, recordSuccess } from '../attempt-record.js';
import type { PlanCursor } from '../call-plan.js';
import { answerOutcome, failureOutcome } from '../origin-outcome.js';
import { type CallRules, hedgeDelay } from './method-rules.js';
import { type CallClass, type FailsafeEvent, type FailsafeRule, ruleFor } from './rules.js';

export interface FailsafeDeps extends AttemptRecordDeps {
  readonly clock: Clock;
  /** Origin scores: every attempt's outcome goes in, hedging reads the origin's p90. */
  readonly scores?: (OriginScoreSink & OriginScoreView) | undefined;
  /** Benched and capped origins (routing/throttling.ts). */
  readonly throttle?: OriginThrottle | undefined;
  /** Per-origin statistics for the console (stats/origin-stats.ts). */
  readonly stats?: OriginStatsSink | undefined;
}

/** What the caller's checks make of an answer (besides the answer itself). */
export interface Judged {
  readonly event: Extract<FailsafeEvent, 'answer' | 'missing' | 'behind' | 'bad' | 'partly-throttled'>;
  /** With `partly-throttled`: the wait the throttled elements asked for, if any. */
  readonly retryAfterMs?: number | undefined;
}

export const ANSWERED: Judged = { event: 'answer' };

/** The chain checks' verdicts (answer-checks.ts) as the engine's events (made once: no object per answer). */
export const VERDICT_EVENTS: Readonly<Record<Verdict, Judged>> = {
  ok: ANSWERED,
  missing: { event: 'missing' },
  behind: { event: 'behind' },
  bad: { event: 'bad' },
};

export interface FailsafeCall<R> {
  readonly network: string;
  /** The method, or "batch" (logs). */
  readonly method: string;
  /**
   * The client request whose logger (with its id) takes the lines about the call; else the engine's. Read
   * only when a line is written: the request's logger is made on first use (rpc/request-trace.ts).
   */
  readonly trace?: { readonly logger: Logger } | undefined;
  readonly calls: CallClass;
  readonly plan: PlanCursor;
  readonly signal: ClientSignal | undefined;
  /** Timeout, attempts and hedging; `hedge` undefined when this call may not be hedged. */
  readonly rules: CallRules;
  start(candidate: Candidate): StartedAttempt<R>;
  /** The chain checks of an answer to a read (writes are never judged). */
  judge(candidate: Candidate, reply: R): Judged;
  /** The most advanced origin other than `candidate` (for `most-advanced`), if any is ahead of it. */
  mostAdvanced(candidate: Candidate): Candidate | undefined;
  /** An answer nobody takes (an abandoned attempt's): frees what it holds. */
  discard(reply: R): void;
  /**
   * When no attempt was accepted and no answer was kept: true when the caller handles it its own way
   * (an upstream batch every origin refused goes out call by call); runFailsafe then resolves undefined.
   */
  unanswered?(failures: readonly Attempt[]): boolean;
}

export interface FailsafeAnswer<R> {
  readonly reply: R;
  readonly candidate: Candidate;
  /** What the answer was: accepted on `answer` or `behind-again` (…), or a `fallback` that passed through. */
  readonly event: FailsafeEvent | 'fallback';
  /** The attempts that failed before it. */
  readonly failures: readonly Attempt[];
}

/** Runs the call; its answer, or throws the client's error (undefined only as `unanswered` says). */
export function runFailsafe<R>(deps: FailsafeDeps, call: FailsafeCall<R>): Promise<FailsafeAnswer<R> | undefined> {
  return new FailsafeRun(deps, call).run();
}

interface Flight<R> {
  readonly candidate: Candidate;
  readonly hedge: boolean;
  readonly attempt: StartedAttempt<R>;
  readonly settled: Promise<Settled<R>>;
}

type Settled<R> =
  | { readonly flight: Flight<R>; readonly ok: true; readonly reply: R; readonly ms: number }
  | { readonly flight: Flight<R>; readonly ok: false; readonly error: unknown; readonly ms: number };

/** The hedge timer fired. */
const SLOW = Symbol('slow');

class FailsafeRun<R> {
  readonly #deps: FailsafeDeps;
  readonly #call: FailsafeCall<R>;
  readonly #failures: Attempt[] = [];
  readonly #flights = new Set<Flight<R>>();
  /** Throttled attempts and origins skipped at their cap (for UPSTREAM_THROTTLED). */
  readonly #throttled: Candidate[] = [];
  #launched = 0;
  /** One more attempt than max_attempts, for the lagging-origin retry (as it always had). */
  #extra = 0;
  #hedges = 0;
  #stopped = false;
  #retriedBehind = false;
  #fallback: { reply: R; candidate: Candidate } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #slow: Promise<typeof SLOW> | undefined;

  constructor(deps: FailsafeDeps, call: FailsafeCall<R>) {
    this.#deps = deps;
    this.#call = call;
  }

  async run(): Promise<FailsafeAnswer<R> | undefined> {
    try {
      for (;;) {
        if (this.#call.signal?.aborted) break;
        if (this.#flights.size === 0 && (this.#stopped || !this.#launch(false))) break;
        const settled = await this.#next();
        if (settled === SLOW) {
          this.#onSlow();
          continue;
        }
        const answer = this.#settle(settled);
        if (answer !== undefined) return answer;
      }
      return this.#end();
    } finally {
      this.#disarm();
      for (const flight of this.#flights) this.#abandon(flight);
      this.#flights.clear();
    }
  }

  /** Starts an attempt on the next usable candidate; false when none is left (or attempts ran out). */
  #launch(hedge: boolean): boolean {
    const { plan, rules, calls } = this.#call;
    const throttle = this.#deps.throttle;
    while (this.#launched < rules.maxAttempts + this.#extra) {
      const candidate = plan.next();
      if (candidate === undefined) return false;
      if (throttle !== undefined && !throttle.take(candidate.pool.id, candidate.origin)) {
        if (ruleFor('capped', calls).then === 'skip') {
          this.#throttled.push(candidate);
          continue;
        }
      }
      this.#launched += 1;
      if (hedge) this.#hedges += 1;
      this.#fly(candidate, hedge);
      return true;
    }
    return false;
  }

  #fly(candidate: Candidate, hedge: boolean): void {
    const clock = this.#deps.clock;
    const started = clock.monotonic();
    const attempt = this.#call.start(candidate);
    const flight: Flight<R> = {
      candidate,
      hedge,
      attempt,
      settled: attempt.result.then(
        (reply): Settled<R> => ({ flight, ok: true, reply, ms: clock.monotonic() - started }),
        (error: unknown): Settled<R> => ({ flight, ok: false, error, ms: clock.monotonic() - started }),
      ),
    };
    this.#flights.add(flight);
    this.#arm(candidate);
  }

  /** Arms the hedge timer for the attempt just started, when the call may still be hedged. */
  #arm(candidate: Candidate): void {
    this.#disarm();
    const hedge = this.#call.rules.hedge;
    if (hedge === undefined || this.#hedges >= hedge.max) return;
    // (Whether the plan has another candidate is asked only when the timer fires: asking now would
    // build the rest of a lazy plan for every hedged call.)
    if (this.#launched >= this.#call.rules.maxAttempts) return;
    const delay = hedgeDelay(hedge, this.#deps.scores?.score(candidate.pool.id, candidate.origin.name));
    this.#slow = new Promise((resolve) => {
      this.#timer = setTimeout(resolve, delay, SLOW);
    });
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#slow = undefined;
  }

  /** The next attempt to end, or the hedge timer. */
  #next(): Promise<Settled<R> | typeof SLOW> {
    const slow = this.#slow;
    if (this.#flights.size === 1 && slow === undefined)
      return (this.#flights.values().next().value as Flight<R>).settled;
    const waits: Array<Promise<Settled<R> | typeof SLOW>> = [];
    for (const flight of this.#flights) waits.push(flight.settled);
    if (slow !== undefined) waits.push(slow);
    return Promise.race(waits);
  }

  #onSlow(): void {
    this.#disarm();
    if (ruleFor('slow', this.#call.calls).then === 'hedge') this.#launch(true);
  }

  /** One attempt ended: its event, the rule, and what the rule says. An accepted answer is returned. */
  #settle(settled: Settled<R>): FailsafeAnswer<R> | undefined {
    const { flight } = settled;
    this.#flights.delete(flight);
    const call = this.#call;
    if (!settled.ok && (call.signal?.aborted || flight.attempt.live?.stoppedByClient)) return undefined;
    const failure = settled.ok ? undefined : asFailure(settled.error);
    const judged = settled.ok
      ? call.calls === 'write'
        ? ANSWERED
        : call.judge(flight.candidate, settled.reply)
      : undefined;
    let event: FailsafeEvent = judged?.event ?? (failure?.kind as FailsafeEvent);
    if (event === 'behind' && this.#retriedBehind) event = 'behind-again';
    const rule = ruleFor(event, call.calls);
    this.#observe(settled, rule);
    const { candidate } = flight;
    if (failure === undefined) {
      if (rule.health) recordSuccess(this.#deps, call.network, candidate);
    } else {
      recordFailure(this.#recordDeps(), candidate, failure, call, this.#failures, rule.health);
      if (failure.kind === 'throttled') this.#throttled.push(candidate);
    }
    if (rule.bench) {
      this.#deps.throttle?.bench(
        candidate.pool.id,
        candidate.origin.name,
        failure?.retryAfterMs ?? judged?.retryAfterMs,
      );
    }
    if (rule.keep && failure?.answer !== undefined) this.#fallback = { reply: failure.answer as R, candidate };
    return this.#act(rule, settled);
  }

  #act(rule: FailsafeRule, settled: Settled<R>): FailsafeAnswer<R> | undefined {
    const { candidate } = settled.flight;
    switch (rule.then) {
      case 'accept':
        return settled.ok ? this.#accept(settled.flight, settled.reply, rule.on) : undefined;
      case 'fallback-next':
      case 'most-advanced':
        if (settled.ok) this.#fallback = { reply: settled.reply, candidate };
        (this.#call.trace?.logger ?? this.#deps.logger).debug(VERDICT_NOTES[rule.on as Exclude<Verdict, 'ok'>], {
          network: this.#call.network,
          method: this.#call.method,
          pool: candidate.pool.name,
          origin: candidate.origin.name,
        });
        if (rule.then === 'most-advanced') this.#retryOnMostAdvanced(candidate);
        return undefined;
      case 'stop':
        this.#stopped = true;
        return undefined;
      default:
        // next (the loop starts one when nothing else is in flight), wait, skip, hedge: nothing more here.
        return undefined;
    }
  }

  /** `most-advanced`: the next attempt goes to the most advanced origin, once; none ahead: stop. */
  #retryOnMostAdvanced(candidate: Candidate): void {
    this.#retriedBehind = true;
    const best = this.#call.mostAdvanced(candidate);
    if (best === undefined) {
      this.#stopped = true;
      return;
    }
    this.#call.plan.putNext(best);
    this.#extra = 1;
  }

  #accept(flight: Flight<R>, reply: R, event: FailsafeEvent): FailsafeAnswer<R> {
    if (this.#hedges > 0) this.#deps.metrics?.hedge(this.#call.network, flight.hedge ? 'won' : 'lost');
    return { reply, candidate: flight.candidate, event, failures: this.#failures };
  }

  /** No answer accepted: a kept answer, else the caller's own way, else the client's error. */
  #end(): FailsafeAnswer<R> | undefined {
    const { network, calls, plan, rules } = this.#call;
    if (this.#fallback !== undefined) {
      return {
        reply: this.#fallback.reply,
        candidate: this.#fallback.candidate,
        event: 'fallback',
        failures: this.#failures,
      };
    }
    if (this.#call.unanswered?.(this.#failures) === true) return undefined;
    const throttle = this.#deps.throttle;
    // A read whose every attempt was throttled, or a call that never reached an origin (all at their cap).
    if (
      (calls === 'read' || this.#failures.length === 0) &&
      throttle !== undefined &&
      this.#throttled.length > 0 &&
      this.#failures.every((failure) => failure.kind === 'throttled')
    ) {
      throw throttledError(network, this.#throttled, (c) => throttle.wait(c.pool.id, c.origin));
    }
    const cut = calls === 'write' && this.#stopped && this.#launched < rules.maxAttempts && plan.hasMore();
    const note = cut
      ? ' The transaction may have reached the origin, so it was not resent; check its hash before sending again.'
      : '';
    throw exhausted(network, this.#failures, note);
  }

  /** Nobody waits for this attempt any more: it finishes detached; its outcome still counts in scores. */
  #abandon(flight: Flight<R>): void {
    flight.attempt.live?.abandon();
    void flight.settled.then((settled) => {
      if (!settled.ok && flight.attempt.live?.stoppedByClient) return;
      const event: FailsafeEvent = settled.ok ? 'answer' : asFailure(settled.error).kind;
      this.#observe(settled, ruleFor(event, this.#call.calls));
      if (settled.ok) this.#call.discard(settled.reply);
    });
  }

  /** The attempt's latency and outcome into its origin's statistics, score and series. */
  #observe(settled: Settled<R>, rule: FailsafeRule): void {
    const { pool, origin } = settled.flight.candidate;
    const deps = this.#deps;
    deps.stats?.record(pool.id, origin.name, settled.ms, settled.ok);
    if (rule.score !== 'none') deps.scores?.record(pool.id, origin.name, rule.score, settled.ms);
    if (deps.metrics === undefined) return;
    const outcome = settled.ok ? answerOutcome(rule.on, settled.reply) : failureOutcome(asFailure(settled.error));
    if (outcome !== undefined)
      deps.metrics.originAttempt(this.#call.network, pool.name, origin.name, outcome, settled.ms / 1000);
  }

  /** What recordFailure needs, with the request's logger when the call has one (made on a failure only). */
  #recordDeps(): AttemptRecordDeps {
    const trace = this.#call.trace;
    return trace === undefined ? this.#deps : { ...this.#deps, logger: trace.logger };
  }
}
