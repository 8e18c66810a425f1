/**
 * Forwarding of one JSON-RPC call to the origins of a network (SPEC §2). This is the seam for anything
 * that sits between the gateway and the origins (a response cache wraps `Forwarder`).
 *
 * The call goes out as the client's own bytes with only the id replaced by a small integer of ours; the
 * origin's body comes back untouched, with the span of its id, so the handler can splice the client's
 * raw id in. Rules per attempt (each attempt bounded by `gateway.request_timeout`):
 *   - success: HTTP 2xx (or 4xx other than 401/403/407/408/429) whose body is a JSON-RPC response with
 *     our id and a `result` or `error`; an origin's own JSON-RPC error is a success (passed through);
 *   - failure: connection error, timeout, HTTP 5xx/429/401/403/407/408, empty or garbled body, wrong id.
 * A read is retried on the next origin of the plan (router.ts), up to `gateway.max_attempts` origins.
 * A write (eth_sendRawTransaction, eth_sendTransaction) is retried only after a failure to connect, when
 * the request surely never reached the origin. Every attempt's outcome is reported once to
 * routing/feedback.ts (a connection failure demotes the origin for a moment; connect, timeout and
 * network failures reach the HealthView).
 * Filter calls go first to the origin that created the filter (filter-affinity.ts).
 * Large answers stream: when the caller allows it (`stream`, set for single requests) and a 2xx body
 * grows past `STREAM_AFTER_BYTES` (1 MiB), the reply resolves with its first bytes (which must already
 * show our id and the start of `result`/`error`) and `rest` streams the remainder to the client, so a
 * 10 MiB eth_getLogs answer never sits whole in memory. Everything up to the id is checked as above;
 * bytes after that point are passed on unparsed, and if the origin fails midway the client's
 * connection is cut (as with any streaming proxy): the retry rules apply until the answer streams.
 * Answers whose id comes after the result (or past their first bytes) cannot stream and are collected whole.
 * A streaming answer takes one of its client's stream slots (stream-slots.ts, `max_streams_per_client`);
 * with none free it waits for one, paused, until the attempt's deadline, then GATEWAY_BUSY.
 * Busy, not failed (`busy`, never reported to the HealthView or ejected, no next origin: the wait
 * already took request_timeout): an attempt whose request still waited for a free connection of the
 * origin's pool when its deadline passed, or whose answer found no stream slot. So a busy origin is not
 * waited on needlessly, a plan whose first origin has no free connection (pool.ts `hasCapacity`) tries
 * first the planned origins that have one (except a filter call, which must reach its filter's origin).
 * A read that meets a keep-alive socket the origin dropped as it was reused is first sent once more on a
 * fresh connection to the same origin (`replayable`, upstream/origin-clients.ts); a write never is.
 * When every attempt failed: 504 UPSTREAM_TIMEOUT if all of them timed out, else 502 UPSTREAM_FAILED;
 * `data.attempts` lists pool, origin name and reason (never addresses: they may hold API keys). How
 * failures are classified: attempt-failure.ts; how an answer is checked: origin-answer.ts.
 */

import type { Readable } from 'node:stream';
import type { Logger } from '../../log.js';
import type { OriginFeedback } from '../../routing/feedback.js';
import type { OutstandingRequests } from '../../routing/outstanding.js';
import type { Candidate, OriginRouter } from '../../routing/router.js';
import type { GatewayMetrics } from '../metrics.js';
import type { BatchOutcome, BatchRequest, Forwarder, UpstreamReply, UpstreamRequest } from '../rpc/forwarder.js';
import { withId } from '../rpc/id-splice.js';
import { STANDARD_METHODS } from '../rpc/methods.js';
import { type AttemptOptions, type LiveAttempt, runAttempt } from './attempt.js';
import { type Attempt, AttemptFailure, describeAttempts, exhausted } from './attempt-failure.js';
import { batchWire, matchBatch } from './batch-wire.js';
import type { FilterAffinity } from './filter-affinity.js';
import { collect, headId, responseId } from './origin-answer.js';
import type { ClientResponse, OriginClients } from './origin-clients.js';
import { type StreamSlots, waitForSlot } from './stream-slots.js';

/** A 2xx answer that grows past this many bytes streams to the client (when the request allows it). */
export const STREAM_AFTER_BYTES = 1_048_576;

export interface OriginForwarderDeps {
  router: OriginRouter;
  clients: OriginClients;
  /** Where each attempt's outcome goes, once (demotion and the HealthView). */
  feedback: OriginFeedback;
  outstanding: OutstandingRequests;
  logger: Logger;
  filters: FilterAffinity;
  metrics?: GatewayMetrics | undefined;
  /** Per-client stream slots (gateway.max_streams_per_client); streams are unbounded without. */
  streamSlots?: StreamSlots | undefined;
  requestTimeoutMs: number;
  maxAttempts: number;
}

export class OriginForwarder implements Forwarder {
  readonly #deps: OriginForwarderDeps;
  #nextId = 1;

  constructor(deps: OriginForwarderDeps) {
    this.#deps = deps;
  }

  assertRoutable(network: string, pools: readonly string[]): void {
    this.#deps.router.assertRoutable(network, pools);
  }

  async forward(request: UpstreamRequest): Promise<UpstreamReply> {
    const { maxAttempts } = this.#deps;
    const { call } = request;
    const plan = this.#plan(request, maxAttempts);
    const write = STANDARD_METHODS[call.method]?.write === true;
    const upstreamId = this.#nextId;
    this.#nextId = this.#nextId >= 2_000_000_000 ? 1 : this.#nextId + 1;
    const idText = String(upstreamId);
    const wire = call.id === undefined ? call.raw : withId(call.raw, call.id, idText);
    const streamFor = request.stream === true && call.id !== undefined ? (request.client ?? '') : undefined;
    // One object for every attempt of this call: the runner's options and what `singleAnswer` checks.
    const options: CallAttempt = {
      signal: request.signal,
      // A read may be sent once more on a fresh connection if the reused socket it went out on closed
      // before any byte of the answer (origin-clients.ts); a write never is: it may have arrived.
      replayable: !write,
      streamAfter: streamFor === undefined ? undefined : STREAM_AFTER_BYTES,
      idText: call.id === undefined ? undefined : idText,
      streamFor,
      slots: this.#deps.streamSlots,
    };

    const attempts: Attempt[] = [];
    for (const candidate of plan) {
      if (request.signal?.aborted) break;
      try {
        const reply = await runAttempt(this.#deps, candidate, wire, options, singleAnswer, options);
        this.#deps.metrics?.attempt(request.network, 'ok');
        this.#deps.feedback.succeeded(candidate);
        this.#deps.filters.record(request.network, call, reply.body, { pool: reply.pool, origin: reply.origin });
        if (attempts.length > 0) {
          this.#deps.logger.info('request succeeded after failover', {
            network: request.network,
            method: call.method,
            origin: candidate.origin.name,
            failed: attempts.map((a) => `${a.pool}/${a.origin}: ${a.reason}`),
          });
        }
        return reply;
      } catch (err) {
        // The client went away: not the origin's fault, and nobody is waiting for a retry.
        if (request.signal?.aborted) break;
        const failure = this.#noteFailure(candidate, err, request.network, call.method, attempts);
        if (failure.kind === 'busy' || (write && failure.kind !== 'connect')) break;
      }
    }
    const writeNote =
      write && attempts.length < plan.length
        ? ' The transaction may have reached the origin, so it was not resent; check its hash before sending again.'
        : '';
    throw exhausted(request.network, attempts, writeNote);
  }

  /**
   * The calls of a read-only batch (no writes, no filter calls: the handler sends those one by one) as
   * one upstream batch, origin after origin of the plan until one answers as a whole (batch-wire.ts).
   * Per call: the origin's answer element, or undefined when its array had none for that call (the
   * handler then forwards that call on its own) or the call is a notification. When every origin
   * answered but none with a usable batch (HTTP error status, garbled, not an array, no answer of
   * ours), every call is forwarded on its own; when attempts failed otherwise (connection, timeout) or
   * no origin is healthy, every call gets the error forward() would have thrown.
   */
  async forwardBatch(request: BatchRequest): Promise<BatchOutcome[]> {
    try {
      const replies = await this.#batch(request);
      if (replies === undefined) return request.calls.map(() => undefined);
      return replies.map((reply, i) =>
        reply !== undefined ? { reply } : request.calls[i]?.id === undefined ? { sent: true } : undefined,
      );
    } catch (error) {
      return request.calls.map(() => ({ error }));
    }
  }

  /** The origin's answers per call; undefined when no origin took the batch (send the calls one by one). */
  async #batch(request: BatchRequest): Promise<Array<UpstreamReply | undefined> | undefined> {
    const { maxAttempts } = this.#deps;
    const planned = this.#deps.router.plan(request.network, request.pools);
    const plan = this.#roomFirst(planned.length > maxAttempts ? planned.slice(0, maxAttempts) : planned);
    // Ids need only be unique inside one upstream request (its answer is matched on its own): 1..n.
    let next = 0;
    const ids = request.calls.map((call) => (call.id === undefined ? undefined : String(++next)));
    const wire = batchWire(request.calls, ids);
    // Upstream batches hold only reads (the handler sends writes call by call): replayable.
    const options: AttemptOptions = { signal: request.signal, replayable: true, streamAfter: undefined };
    const attempts: Attempt[] = [];
    for (const candidate of plan) {
      if (request.signal?.aborted) break;
      try {
        const answers = await runAttempt(this.#deps, candidate, wire, options, batchAnswers, ids);
        this.#deps.metrics?.attempt(request.network, 'ok');
        this.#deps.feedback.succeeded(candidate);
        if (attempts.length > 0) {
          this.#deps.logger.info('batch succeeded after failover', {
            network: request.network,
            origin: candidate.origin.name,
            failed: attempts.map((a) => `${a.pool}/${a.origin}: ${a.reason}`),
          });
        }
        const pool = candidate.pool.name;
        const origin = candidate.origin.name;
        return answers.map((answer) =>
          answer === undefined ? undefined : { body: answer.body, id: answer.id, pool, origin },
        );
      } catch (err) {
        if (request.signal?.aborted) break;
        if (this.#noteFailure(candidate, err, request.network, 'batch', attempts).kind === 'busy') break;
      }
    }
    // Every origin answered, but none with a usable batch (some refuse batches or cap their size):
    // the calls go out one by one instead, with the usual per-call rules.
    if (
      !request.signal?.aborted &&
      attempts.length > 0 &&
      attempts.every((a) => a.kind === 'status' || a.kind === 'garbled')
    ) {
      this.#deps.logger.info('no origin answered the batch; forwarding its calls one by one', {
        network: request.network,
        failed: describeAttempts(attempts),
      });
      return undefined;
    }
    throw exhausted(request.network, attempts);
  }

  /**
   * The router's plan cut to `maxAttempts`, with the home origin of the call's filter (filter-affinity.ts)
   * moved to the front; else origins with a free connection first (#roomFirst).
   */
  #plan(request: UpstreamRequest, maxAttempts: number): Candidate[] {
    const planned = this.#deps.router.plan(request.network, request.pools);
    const home = this.#deps.filters.homeOf(request.network, request.call);
    if (home === undefined) {
      return this.#roomFirst(planned.length > maxAttempts ? planned.slice(0, maxAttempts) : planned);
    }
    const index = planned.findIndex((c) => c.pool.name === home.pool && c.origin.name === home.origin);
    if (index > 0) planned.unshift(...planned.splice(index, 1));
    return planned.length > maxAttempts ? planned.slice(0, maxAttempts) : planned;
  }

  /**
   * `plan` unchanged when its first origin has a free connection (the usual case: one check); else
   * the candidates that have one first, each group in plan order, so a call does not queue behind an
   * origin's busy connections while another planned origin has room.
   */
  #roomFirst(plan: Candidate[]): Candidate[] {
    if (plan.length < 2 || this.#hasRoom(plan[0] as Candidate)) return plan;
    const room: Candidate[] = [];
    const full: Candidate[] = [];
    for (const candidate of plan) (this.#hasRoom(candidate) ? room : full).push(candidate);
    return room.length === 0 ? plan : room.concat(full);
  }

  #hasRoom(candidate: Candidate): boolean {
    try {
      return this.#deps.clients.target(candidate.origin).pool.hasCapacity;
    } catch {
      return true; // an unusable address fails at once, without waiting
    }
  }

  /** Records a failed attempt: in `attempts`, metrics, the origin feedback (routing/feedback.ts) and the log. */
  #noteFailure(
    candidate: Candidate,
    err: unknown,
    network: string,
    method: string,
    attempts: Attempt[],
  ): AttemptFailure {
    const failure =
      err instanceof AttemptFailure ? err : new AttemptFailure('network', (err as Error).message ?? String(err));
    const { pool, origin } = candidate;
    attempts.push({ pool: pool.name, origin: origin.name, reason: failure.message, kind: failure.kind });
    this.#deps.metrics?.attempt(network, failure.kind);
    if (failure.kind === 'busy') {
      // The gateway's own capacity, not the origin's health: no feedback, no warning per call
      // (switchyard_gateway_upstream_attempts_total{result="busy"} counts them).
      this.#deps.logger.debug('gateway busy', {
        network,
        method,
        pool: pool.name,
        origin: origin.name,
        reason: failure.message,
      });
      return failure;
    }
    this.#deps.feedback.failed(candidate, failure.kind, failure.message);
    this.#deps.logger.warn('origin attempt failed', {
      network,
      method,
      pool: pool.name,
      origin: origin.name,
      kind: failure.kind,
      reason: failure.message,
    });
    return failure;
  }
}

/** What each attempt of one call needs: the runner's options and what its answer is checked against. */
interface CallAttempt extends AttemptOptions {
  /** Our id in the request; undefined for a notification. */
  readonly idText: string | undefined;
  /** The client whose stream slots a large answer takes; undefined: the answer is collected whole. */
  readonly streamFor: string | undefined;
  readonly slots: StreamSlots | undefined;
}

/**
 * A single call's answer: ours (our id, `result` or `error`). A whole answer is checked at once (no
 * promise); a streaming one in `streamingAnswer`.
 */
function singleAnswer(
  res: ClientResponse,
  attempt: LiveAttempt,
  call: CallAttempt,
): UpstreamReply | Promise<UpstreamReply> {
  if (res.rest !== undefined) return streamingAnswer(res, res.rest, attempt, call);
  const { body, status } = res;
  const { idText } = call;
  const pool = attempt.candidate.pool.name;
  const origin = attempt.candidate.origin.name;
  if (idText === undefined) {
    if (status >= 300) throw new AttemptFailure('status', `HTTP ${status}`);
    return { body, id: undefined, pool, origin };
  }
  const id = responseId(body, idText);
  if (id === undefined) {
    throw new AttemptFailure(
      status >= 300 ? 'status' : 'garbled',
      status >= 300
        ? `HTTP ${status}`
        : body.length === 0
          ? 'empty body'
          : 'body is not a JSON-RPC response to this request',
    );
  }
  return { body, id, pool, origin };
}

/**
 * A large answer that started streaming: when its first bytes show our id, it streams on, once a
 * stream slot of its client is free; else (the id comes late, e.g. after the result) it is collected
 * whole and checked like any other.
 */
async function streamingAnswer(
  res: ClientResponse,
  rest: Readable,
  attempt: LiveAttempt,
  call: CallAttempt,
): Promise<UpstreamReply> {
  const id = headId(res.body, call.idText as string);
  if (id === undefined) {
    attempt.onStop((reason) => rest.destroy(reason));
    let body: Buffer;
    try {
      body = await collect(res.body, rest);
    } catch (err) {
      throw attempt.failure(err);
    }
    return singleAnswer({ status: res.status, body }, attempt, call);
  }
  const slots = call.slots;
  const client = call.streamFor as string;
  if (slots !== undefined && !slots.take(client)) {
    await waitForSlot(slots, client, rest, attempt.timeoutMs, (cancel) => attempt.onStop(cancel));
  }
  // The answer is ours and well begun: hand the rest over; the origin stays busy until it ends.
  attempt.handOver(rest, slots === undefined ? undefined : () => slots.release(client));
  const reply = { body: res.body, id, rest, pool: attempt.candidate.pool.name, origin: attempt.candidate.origin.name };
  return res.length === undefined ? reply : { ...reply, length: res.length };
}

/** An upstream batch's answers matched to our ids (batch-wire.ts); anything else fails the attempt. */
function batchAnswers(
  res: ClientResponse,
  _attempt: LiveAttempt,
  ids: readonly (string | undefined)[],
): NonNullable<ReturnType<typeof matchBatch>> {
  const answers = matchBatch(res.body, ids);
  if (answers !== undefined) return answers;
  throw new AttemptFailure(
    res.status >= 300 ? 'status' : 'garbled',
    res.status >= 300
      ? `HTTP ${res.status}`
      : res.body.length === 0
        ? 'empty body'
        : 'body is not a JSON-RPC batch answer to this request',
  );
}
