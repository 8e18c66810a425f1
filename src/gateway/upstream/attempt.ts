/**
 * One attempt on one origin, the same for a single call and an upstream batch (origin-forwarder.ts):
 * the origin's connection pool (an address that cannot be used fails like a refused connection), the
 * exchange, the client going away, the origin's outstanding count (routing/outstanding.ts) and the
 * classification of a failure (attempt-failure.ts). An HTTP status that means failure (5xx,
 * 401/403/407/408/429) fails the attempt as `status`.
 * The attempt's budget, `gateway.request_timeout`, is the exchange's own deadline (one timer, in
 * http1/client/client-exchange.ts): from dispatch (the wait for a connection, the connect, the answer)
 * until the answer is complete or its stream is handed over; a handed-over stream is then bounded by
 * the stall rule (no body bytes for request_timeout while the client keeps up). No timer here.
 *
 * The caller's `check` turns the answer into its result while all of that still holds. A streaming
 * answer it passes on is handed over (`LiveAttempt.handOver`): the outstanding count then lasts until
 * the stream ends. While it reads a stream itself (a late id, a wait for a stream slot), `onStop`
 * redirects what the client leaving stops (the deadline errors the stream itself).
 * With `deps.stats`, each attempt's duration (until its answer was checked, or it failed) and outcome
 * go to the per-origin statistics, and with `deps.metrics` to the per-origin series (origin-outcome.ts
 * says how outcomes are told apart); an attempt the client abandoned is counted in neither.
 * With a client request (`options.trace`), the origin gets its id as `X-Request-Id` and the request
 * learns the origins it tried.
 */
import { finished, type Readable } from 'node:stream';
import type { OriginStatsSink } from '../../model/origin-stats.js';
import type { OutstandingRequests } from '../../routing/outstanding.js';
import type { Candidate } from '../../routing/router.js';
import type { GatewayMetrics } from '../metrics.js';
import type { ClientSignal } from '../rpc/forwarder.js';
import type { RequestTrace } from '../rpc/request-trace.js';
import { AttemptFailure, abortReason, classify, FAILING_STATUS } from './attempt-failure.js';
import { type ClientResponse, exchange, type OriginClients, type PendingResponse } from './origin-clients.js';
import { answerOutcome, failureOutcome } from './origin-outcome.js';

export interface AttemptDeps {
  readonly clients: OriginClients;
  readonly outstanding: OutstandingRequests;
  readonly requestTimeoutMs: number;
  /** Per-origin statistics (stats/origin-stats.ts): one `record` per attempt that reached the exchange. */
  readonly stats?: OriginStatsSink | undefined;
  /** The per-origin series (origin-metrics.ts), one count per attempt like `stats`. */
  readonly metrics?: GatewayMetrics | undefined;
}

/** What the attempts of one request share (made once per request, not per attempt). */
export interface AttemptOptions {
  /** The client's signal: its leaving stops the attempt. */
  readonly signal: ClientSignal | undefined;
  /** The request may be sent once more on a fresh connection after a stale keep-alive socket (reads only). */
  readonly replayable: boolean;
  /** A 2xx body past this many bytes resolves early and streams (origin-clients.ts `exchange`). */
  readonly streamAfter: number | undefined;
  /** The call's network (the per-origin series' label). */
  readonly network: string;
  /** The client request the attempt serves, if any (rpc/request-trace.ts). */
  readonly trace?: RequestTrace | undefined;
}

/** An attempt under way, as its `check` sees it. */
export class LiveAttempt {
  readonly candidate: Candidate;
  readonly timeoutMs: number;
  readonly #pending: PendingResponse;
  readonly #signal: ClientSignal | undefined;
  #stop: ((reason: Error) => void) | undefined;
  #done: (() => void) | undefined;

  constructor(candidate: Candidate, pending: PendingResponse, timeoutMs: number, signal: ClientSignal | undefined) {
    this.candidate = candidate;
    this.#pending = pending;
    this.timeoutMs = timeoutMs;
    this.#signal = signal;
  }

  /** The client left: stop the attempt (a listener on its signal). */
  readonly onClientAbort = (): void => this.stop(abortReason(this.#signal));

  /** Stops the attempt (the client left): the exchange, or what `onStop` named since. */
  stop(reason: Error): void {
    if (this.#stop === undefined) this.#pending.abort(reason);
    else this.#stop(reason);
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
    this.#done?.();
    this.#done = undefined;
  }
}

/**
 * Runs one attempt on `candidate` and returns what `check` makes of the answer. Throws AttemptFailure
 * (or what `check` throws).
 */
export async function runAttempt<A, T>(
  deps: AttemptDeps,
  candidate: Candidate,
  wire: Buffer,
  options: AttemptOptions,
  check: (res: ClientResponse, attempt: LiveAttempt, arg: A) => T | Promise<T>,
  arg: A,
): Promise<T> {
  const { requestTimeoutMs } = deps;
  let target: ReturnType<OriginClients['target']>;
  try {
    target = deps.clients.target(candidate.origin);
  } catch (err) {
    throw new AttemptFailure('connect', `unusable origin address (${(err as Error).message})`);
  }
  const trace = options.trace;
  trace?.tried(candidate.pool.name, candidate.origin.name);
  const pending = exchange(target, wire, requestTimeoutMs, options.streamAfter, {
    replayable: options.replayable,
    headerLines: trace?.originHeader,
  });
  const attempt = new LiveAttempt(candidate, pending, requestTimeoutMs, options.signal);
  const signal = options.signal;
  if (signal?.aborted) attempt.onClientAbort();
  else signal?.addEventListener('abort', attempt.onClientAbort, { once: true });
  attempt.begin(deps.outstanding.start(candidate.pool.id, candidate.origin.name));
  const { stats, metrics } = deps;
  const started = stats === undefined && metrics === undefined ? 0 : performance.now();
  let status: number | undefined;
  let value: T | undefined;
  let failure: unknown;
  let ok = false;
  try {
    let res: ClientResponse;
    try {
      res = await pending.response;
    } catch (err) {
      throw attempt.failure(err);
    }
    status = res.status;
    // (Only a 2xx answer streams, so none of these has a `rest` to stop.)
    if (res.status >= 500 || FAILING_STATUS.has(res.status)) throw new AttemptFailure('status', `HTTP ${res.status}`);
    const result = check(res, attempt, arg);
    // A whole answer is checked synchronously: no promise to wait for.
    value = result instanceof Promise ? await result : result;
    ok = true;
    return value;
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    signal?.removeEventListener('abort', attempt.onClientAbort);
    attempt.end();
    if (signal?.aborted !== true && (stats !== undefined || metrics !== undefined)) {
      const ms = performance.now() - started;
      stats?.record(candidate.pool.id, candidate.origin.name, ms, ok);
      const outcome = ok ? answerOutcome(value) : failureOutcome(failure, status);
      if (outcome !== undefined) {
        metrics?.originAttempt(options.network, candidate.pool.name, candidate.origin.name, outcome, ms / 1000);
      }
    }
  }
}
