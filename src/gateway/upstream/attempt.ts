/**
 * One attempt on one origin, the same for a single call and an upstream batch (the failsafe engine,
 * failsafe/engine.ts, starts them): the origin's connection pool (an address that cannot be used fails
 * like a refused connection), the exchange, the client going away, the origin's outstanding count
 * (routing/outstanding.ts) and the classification of a failure (attempt-failure.ts). An HTTP status that
 * means failure (5xx, 401/403/407/408) fails the attempt as `status`; a 429 as `throttled`, with the
 * wait its `Retry-After` asks for (seconds or an HTTP date; else Infura's `data.backoff_seconds` in its
 * body), so the engine can bench the origin.
 * The attempt's budget (`AttemptOptions.timeoutMs`: `gateway.request_timeout`, or the method's own
 * `timeout`) is the exchange's own deadline (one timer, in http1/client/client-exchange.ts): from
 * dispatch (the wait for a connection, the connect, the answer) until the answer is complete or its
 * stream is handed over; a handed-over stream is then bounded by the stall rule (no body bytes for the
 * timeout while the client keeps up). No timer here.
 *
 * The caller's `check` turns the answer into its result while all of that still holds. A streaming
 * answer it passes on is handed over (`LiveAttempt.handOver`): the outstanding count then lasts until
 * the stream ends. While it reads a stream itself (a late id, a wait for a stream slot), `onStop`
 * redirects what the client leaving stops (the deadline errors the stream itself).
 * `abandon` (a hedge's loser) lets the attempt run on detached from the client: its answer arrives on
 * its connection, which is then reused (or its deadline closes it), and nobody waits for it.
 * With a client request (`options.trace`), the origin gets its id as `X-Request-Id` (`headerLines`)
 * and the request learns the origins it tried.
 */
import { finished, type Readable } from 'node:stream';
import type { Clock } from '../../clock.js';
import { backoffOf } from '../../model/rate-limit-answers.js';
import { retryAfterMs } from '../../model/retry-after.js';
import type { OutstandingRequests } from '../../routing/outstanding.js';
import type { Candidate } from '../../routing/router.js';
import type { ClientSignal } from '../rpc/forwarder.js';
import type { RequestTrace } from '../rpc/request-trace.js';
import { AttemptFailure, abortReason, classify, FAILING_STATUS, THROTTLED_STATUS } from './attempt-failure.js';
import { type ClientResponse, exchange, type OriginClients, type PendingResponse } from './origin-clients.js';

export interface AttemptDeps {
  readonly clients: OriginClients;
  readonly outstanding: OutstandingRequests;
  /** Reads the wall clock for a Retry-After given as an HTTP date. */
  readonly clock: Clock;
}

/** What the attempts of one request share (made once per request, not per attempt). */
export interface AttemptOptions {
  /** The client's signal: its leaving stops the attempt. */
  readonly signal: ClientSignal | undefined;
  /** The request may be sent once more on a fresh connection after a stale keep-alive socket (reads only). */
  readonly replayable: boolean;
  /** A 2xx body past this many bytes resolves early and streams (origin-clients.ts `exchange`). */
  readonly streamAfter: number | undefined;
  /** Each attempt's deadline (ms). */
  readonly timeoutMs: number;
  /** The client request the attempts serve, if any (rpc/request-trace.ts). */
  readonly trace?: RequestTrace | undefined;
  /** Its `X-Request-Id` header line for the origin (`trace.originHeader`, read once per request). */
  readonly headerLines?: string | undefined;
}

/** Largest 429 body read for a back-off hint. */
const MAX_HINT_BYTES = 4096;

/** An attempt under way, as its `check` sees it. */
export class LiveAttempt {
  readonly candidate: Candidate;
  readonly timeoutMs: number;
  readonly #pending: PendingResponse;
  #signal: ClientSignal | undefined;
  #stop: ((reason: Error) => void) | undefined;
  #done: (() => void) | undefined;
  /** The client left and stopped it. */
  #stoppedByClient = false;

  constructor(candidate: Candidate, pending: PendingResponse, timeoutMs: number, signal: ClientSignal | undefined) {
    this.candidate = candidate;
    this.#pending = pending;
    this.timeoutMs = timeoutMs;
    this.#signal = signal;
  }

  /** The client left: stop the attempt (a listener on its signal). */
  readonly onClientAbort = (): void => {
    this.#stoppedByClient = true;
    this.stop(abortReason(this.#signal));
  };

  get stoppedByClient(): boolean {
    return this.#stoppedByClient;
  }

  /** Stops the attempt (the client left): the exchange, or what `onStop` named since. */
  stop(reason: Error): void {
    if (this.#stop === undefined) this.#pending.abort(reason);
    else this.#stop(reason);
  }

  /** Nobody waits for this attempt any more: the client leaving no longer stops it. */
  abandon(): void {
    this.#signal?.removeEventListener('abort', this.onClientAbort);
    this.#signal = undefined;
  }

  /** From now on the client leaving calls `stop` (e.g. destroy the stream being read). */
  onStop(stop: (reason: Error) => void): void {
    this.#stop = stop;
  }

  /** This attempt's error as its failure kind. */
  failure(err: unknown): AttemptFailure {
    return classify(err, this.timeoutMs, this.#pending.busy);
  }

  /** The answer streams on from here: the origin counts as busy until `rest` ends, then `after` runs. */
  handOver(rest: Readable, after?: () => void): void {
    this.#pending.keep(); // the deadline ends; the stall rule takes over
    const done = this.#done;
    this.#done = undefined;
    finished(rest, () => {
      done?.();
      after?.();
    });
  }

  /** Registers the outstanding request; `end` (or the stream handed over) ends it. */
  begin(done: () => void): void {
    this.#done = done;
  }

  end(): void {
    this.#signal?.removeEventListener('abort', this.onClientAbort);
    this.#done?.();
    this.#done = undefined;
  }
}

/** An attempt started: what `check` makes of its answer, and the attempt itself. */
export interface StartedAttempt<T> {
  readonly result: Promise<T>;
  readonly live: LiveAttempt | undefined;
}

/**
 * Starts one attempt on `candidate`; `result` is what `check` makes of the answer, or rejects with an
 * AttemptFailure (or what `check` throws).
 */
export function startAttempt<A, T>(
  deps: AttemptDeps,
  candidate: Candidate,
  wire: Buffer,
  options: AttemptOptions,
  check: (res: ClientResponse, attempt: LiveAttempt, arg: A) => T | Promise<T>,
  arg: A,
): StartedAttempt<T> {
  let target: ReturnType<OriginClients['target']>;
  try {
    target = deps.clients.target(candidate.origin);
  } catch (err) {
    const failure = new AttemptFailure('connect', `unusable origin address (${(err as Error).message})`, {
      cause: err,
    });
    return { result: Promise.reject(failure), live: undefined };
  }
  options.trace?.tried(candidate.pool.name, candidate.origin.name);
  const pending = exchange(target, wire, options.timeoutMs, options.streamAfter, options);
  const attempt = new LiveAttempt(candidate, pending, options.timeoutMs, options.signal);
  const signal = options.signal;
  if (signal?.aborted) attempt.onClientAbort();
  else signal?.addEventListener('abort', attempt.onClientAbort, { once: true });
  attempt.begin(deps.outstanding.start(candidate.pool.id, candidate.origin.name));
  return { result: answered(deps, pending, attempt, check, arg), live: attempt };
}

async function answered<A, T>(
  deps: AttemptDeps,
  pending: PendingResponse,
  attempt: LiveAttempt,
  check: (res: ClientResponse, attempt: LiveAttempt, arg: A) => T | Promise<T>,
  arg: A,
): Promise<T> {
  try {
    let res: ClientResponse;
    try {
      res = await pending.response;
    } catch (err) {
      throw attempt.failure(err);
    }
    // (Only a 2xx answer streams, so none of these has a `rest` to stop.)
    if (res.status === THROTTLED_STATUS) throw throttled(deps, res);
    if (res.status >= 500 || FAILING_STATUS.has(res.status)) throw new AttemptFailure('status', `HTTP ${res.status}`);
    const result = check(res, attempt, arg);
    // A whole answer is checked synchronously: no promise to wait for.
    return result instanceof Promise ? await result : result;
  } finally {
    attempt.end();
  }
}

/** A 429 as a `throttled` failure with the wait it asks for. */
function throttled(deps: AttemptDeps, res: ClientResponse): AttemptFailure {
  let wait = retryAfterMs(res.retryAfter, deps.clock.now());
  if (wait === undefined && res.body.length > 0 && res.body.length <= MAX_HINT_BYTES) {
    try {
      const error = (JSON.parse(res.body.toString('utf8')) as { error?: unknown } | null)?.error;
      if (error !== null && typeof error === 'object') wait = backoffOf(error);
    } catch {
      // not JSON: no hint
    }
  }
  return new AttemptFailure('throttled', 'HTTP 429 (rate limited)', { retryAfterMs: wait });
}
