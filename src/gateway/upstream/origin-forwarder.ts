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
 * The order of origins per call is call-plan.ts's: router, chain-aware order (head-relative calls to
 * origins at the network head, pinned calls to origins that have the block), read-your-writes, filter
 * affinity, max_attempts, free connections first.
 * With a chain tracker, each whole answer to a read is checked (answer-checks.ts): a missing-data error,
 * or an answer other than asked (a lookup by hash answered with another hash, a head above the head
 * ceiling), sends the call on to the next origin (when no origin answers better, the last answer passes
 * through), and a null from an origin behind the chain, or a head below one already reported, is retried
 * once on the most advanced origin (whose answer then passes through, whatever it is). Neither counts
 * against the origin's health. An origin that takes a transaction becomes the client's origin for its
 * pending-state reads (write-affinity.ts).
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
 * A config reload (`reconfigure`) changes `request_timeout`, `max_attempts` and the networks' `max_head_lag`
 * for the plans made and the attempts started from then on.
 */

import type { Readable } from 'node:stream';
import type { CallNeeds, ChainFeedback, ChainView } from '../../chain/types.js';
import type { Clock } from '../../clock.js';
import type { NetworkConfig } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import type { OriginStatsSink } from '../../model/origin-stats.js';
import { mostAdvanced } from '../../routing/chain-order.js';
import type { OriginFeedback } from '../../routing/feedback.js';
import type { OutstandingRequests } from '../../routing/outstanding.js';
import type { Candidate, OriginRouter } from '../../routing/router.js';
import type { GatewayMetrics } from '../metrics.js';
import { callNeeds } from '../rpc/call-needs.js';
import type { BatchRequest, BatchResult, Forwarder, UpstreamReply, UpstreamRequest } from '../rpc/forwarder.js';
import { withId } from '../rpc/id-splice.js';
import { STANDARD_METHODS } from '../rpc/methods.js';
import { type AnswerContext, judgeAnswer, reportPassedHead, VERDICT_NOTES, type Verdict } from './answer-checks.js';
import { type AttemptOptions, type LiveAttempt, runAttempt } from './attempt.js';
import { type Attempt, AttemptFailure, exhausted } from './attempt-failure.js';
import { recordFailure, recordSuccess } from './attempt-record.js';
import { CallPlanner } from './call-plan.js';
import type { FilterAffinity } from './filter-affinity.js';
import { answerParts, collect, headId } from './origin-answer.js';
import type { ClientResponse, OriginClients } from './origin-clients.js';
import { type StreamSlots, waitForSlot } from './stream-slots.js';
import { forwardUpstreamBatch } from './upstream-batch.js';
import type { WriteAffinity } from './write-affinity.js';

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
  /** Times attempts for the per-origin statistics. */
  clock: Clock;
  /** Per-origin statistics for the console (stats/origin-stats.ts); none when absent. */
  stats?: OriginStatsSink | undefined;
  /** The chain tracker (chain/): chain-aware order and answer checks; without it, neither. */
  chain?: (ChainView & ChainFeedback) | undefined;
  /** Read-your-writes (gateway.sticky_after_write). */
  writes?: WriteAffinity | undefined;
  /** Per network: `max_head_lag`. */
  networks?: Readonly<Record<string, Pick<NetworkConfig, 'max_head_lag'>>> | undefined;
}

const NO_NEEDS: CallNeeds = { kind: 'none' };

export class OriginForwarder implements Forwarder {
  readonly #deps: OriginForwarderDeps;
  readonly #planner: CallPlanner;
  #nextId = 1;

  constructor(deps: OriginForwarderDeps) {
    // Its own copy: `reconfigure` changes it, and the planner reads the same object.
    this.#deps = { ...deps };
    this.#planner = new CallPlanner(this.#deps);
  }

  /** Reloaded settings (see the header). */
  reconfigure(settings: Pick<OriginForwarderDeps, 'requestTimeoutMs' | 'maxAttempts' | 'networks'>): void {
    Object.assign(this.#deps, settings);
  }

  assertRoutable(network: string, pools: readonly string[]): void {
    this.#deps.router.assertRoutable(network, pools);
  }

  async forward(request: UpstreamRequest): Promise<UpstreamReply> {
    const { chain } = this.#deps;
    const { call, network } = request;
    const write = STANDARD_METHODS[call.method]?.write === true;
    const needs = chain === undefined ? NO_NEEDS : callNeeds(call.method, call.params, chain, network);
    const { plan, all } = this.#planner.forCall(request, needs);
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
    // An answer that did not satisfy the chain checks: it passes through if nothing better comes.
    let fallback: UpstreamReply | undefined;
    let queue = plan;
    let retriedBehind = false;
    for (let i = 0; i < queue.length; i += 1) {
      const candidate = queue[i] as Candidate;
      if (request.signal?.aborted) break;
      let reply: UpstreamReply;
      try {
        reply = await runAttempt(this.#deps, candidate, wire, options, singleAnswer, options);
      } catch (err) {
        // The client went away: not the origin's fault, and nobody is waiting for a retry.
        if (request.signal?.aborted) break;
        const failure = recordFailure(this.#deps, candidate, err, network, call.method, attempts);
        if (failure.kind === 'busy' || (write && failure.kind !== 'connect')) break;
        continue;
      }
      recordSuccess(this.#deps, network, candidate);
      this.#deps.filters.record(network, call, reply.body, { pool: reply.pool, origin: reply.origin });
      const context: AnswerContext = { network, method: call.method, params: call.params, needs, candidate };
      const verdict: Verdict = chain === undefined || write ? 'ok' : judgeAnswer(chain, context, reply);
      if (verdict === 'ok' || (verdict === 'behind' && retriedBehind)) {
        if (verdict === 'behind' && chain !== undefined) reportPassedHead(chain, context, reply);
        this.#succeeded(request, candidate, reply, attempts, write);
        return reply;
      }
      fallback = reply;
      this.#deps.logger.debug(VERDICT_NOTES[verdict], {
        network,
        method: call.method,
        pool: candidate.pool.name,
        origin: candidate.origin.name,
      });
      if (verdict === 'behind') {
        retriedBehind = true;
        const best = mostAdvanced(
          all,
          chain as ChainView,
          candidate,
          chain?.origin(candidate.pool.id, candidate.origin.name)?.head,
        );
        if (best === undefined) break;
        queue = [...queue.slice(0, i + 1), best, ...queue.slice(i + 1).filter((c) => c !== best)];
      }
    }
    if (fallback !== undefined) return fallback;
    const writeNote =
      write && attempts.length < plan.length
        ? ' The transaction may have reached the origin, so it was not resent; check its hash before sending again.'
        : '';
    throw exhausted(network, attempts, writeNote);
  }

  /** A call answered: read-your-writes for a taken transaction, and a log line after failover. */
  #succeeded(
    request: UpstreamRequest,
    candidate: Candidate,
    reply: UpstreamReply,
    attempts: readonly Attempt[],
    write: boolean,
  ): void {
    if (write && request.client !== undefined && reply.outcome?.key === 'result') {
      this.#deps.writes?.record(request.client, request.network, {
        poolId: candidate.pool.id,
        origin: candidate.origin.name,
      });
    }
    if (attempts.length > 0) {
      this.#deps.logger.info('request succeeded after failover', {
        network: request.network,
        method: request.call.method,
        origin: candidate.origin.name,
        failed: attempts.map((a) => `${a.pool}/${a.origin}: ${a.reason}`),
      });
    }
  }

  /**
   * The calls of a read-only batch (no writes, no filter calls: the handler sends those one by one) as
   * one upstream batch (upstream-batch.ts).
   */
  forwardBatch(request: BatchRequest): Promise<BatchResult> {
    return forwardUpstreamBatch(this.#deps, this.#planner, request);
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
  const parts = answerParts(body, idText);
  if (parts === undefined) {
    throw new AttemptFailure(
      status >= 300 ? 'status' : 'garbled',
      status >= 300
        ? `HTTP ${status}`
        : body.length === 0
          ? 'empty body'
          : 'body is not a JSON-RPC response to this request',
    );
  }
  return { body, id: parts.id, pool, origin, outcome: parts.outcome };
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
