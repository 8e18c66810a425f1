/**
 * Upstream batches (proxyd-style): the read-only calls of a client's batch go to one origin as one JSON-RPC
 * batch (batch-wire.ts builds and matches the bytes), origin after origin of the batch's plan
 * (call-plan.ts, for what the calls need together) until one answers as a whole. With a chain tracker
 * each answer element is checked like a single call's (answer-checks.ts); one the checks turn down
 * (missing data, a null or a head from behind the chain, an answer other than asked) is left out, so the
 * handler forwards that call
 * on its own with the per-call rules.
 */
import type { CallNeeds, ChainFeedback, ChainView } from '../../chain/types.js';
import { callNeeds } from '../rpc/call-needs.js';
import type { BatchOutcome, BatchRequest, BatchResult, UpstreamReply } from '../rpc/forwarder.js';
import { judgeAnswer, worthJudging } from './answer-checks.js';
import { type AttemptDeps, type AttemptOptions, type LiveAttempt, runAttempt } from './attempt.js';
import { type Attempt, AttemptFailure, describeAttempts, exhausted } from './attempt-failure.js';
import { type AttemptRecordDeps, recordFailure, recordSuccess } from './attempt-record.js';
import { type BatchElementAnswer, batchWire, type MatchedBatch, matchBatch } from './batch-wire.js';
import type { CallPlanner } from './call-plan.js';
import type { ClientResponse } from './origin-clients.js';

export interface UpstreamBatchDeps extends AttemptDeps, AttemptRecordDeps {
  readonly chain?: (ChainView & ChainFeedback) | undefined;
}

const NO_NEEDS: CallNeeds = { kind: 'none' };

/**
 * The calls of a read-only batch (no writes, no filter calls: the handler sends those one by one) as
 * one upstream batch, origin after origin of the plan until one answers as a whole (batch-wire.ts).
 * Per call: the origin's answer element, or undefined when its array had none for that call (the
 * handler then forwards that call on its own) or the call is a notification. When every origin
 * answered but none with a usable batch (HTTP error status, garbled, not an array, no answer of
 * ours), every call is forwarded on its own; when attempts failed otherwise (connection, timeout) or
 * no origin is healthy, every call gets the error forward() would have thrown.
 */
export async function forwardUpstreamBatch(
  deps: UpstreamBatchDeps,
  planner: CallPlanner,
  request: BatchRequest,
): Promise<BatchResult> {
  try {
    const sent = await sendBatch(deps, planner, request);
    if (sent === undefined) return { outcomes: request.calls.map(() => undefined) };
    return new SentBatchResult(request.calls, sent);
  } catch (error) {
    return { outcomes: request.calls.map(() => ({ error })) };
  }
}

interface SentBatch {
  /** The origin's answer per call (undefined: none, or one the chain checks turned down). */
  answers: Array<BatchElementAnswer | undefined>;
  pool: string;
  origin: string;
  /** The origin's body when it is the client's whole answer as it stands (BatchResult.whole). */
  whole: Buffer | undefined;
}

/**
 * A batch an origin answered. Its outcomes (an object and a reply per call) are made when first read: a
 * whole answer usually goes to the client without anyone reading them.
 */
class SentBatchResult implements BatchResult {
  readonly whole: Buffer | undefined;
  readonly #calls: BatchRequest['calls'];
  readonly #sent: SentBatch;
  #outcomes: BatchOutcome[] | undefined;

  constructor(calls: BatchRequest['calls'], sent: SentBatch) {
    this.#calls = calls;
    this.#sent = sent;
    this.whole = sent.whole;
  }

  get outcomes(): BatchOutcome[] {
    const { answers, pool, origin } = this.#sent;
    this.#outcomes ??= answers.map(
      (answer, i): BatchOutcome =>
        answer !== undefined
          ? { reply: new BatchReply(answer, pool, origin) }
          : this.#calls[i]?.id === undefined
            ? { sent: true }
            : undefined,
    );
    return this.#outcomes;
  }
}

/** The origin's answers per call; undefined when no origin took the batch (send the calls one by one). */
async function sendBatch(
  deps: UpstreamBatchDeps,
  planner: CallPlanner,
  request: BatchRequest,
): Promise<SentBatch | undefined> {
  const { chain } = deps;
  const needs =
    chain === undefined ? [] : request.calls.map((call) => callNeeds(call.method, call.params, chain, request.network));
  const plan = planner.forBatch(request.network, request.pools, batchNeeds(needs, chain?.networkHead(request.network)));
  // The client's own body and ids when it can go as it is (BatchRequest.asIs); else ids of ours,
  // which need only be unique inside one upstream request (its answer is matched on its own): 1..n.
  const { asIs } = request;
  let ids: readonly (string | undefined)[];
  let wire: Buffer;
  if (asIs !== undefined) {
    ids = asIs.ids;
    wire = asIs.body;
  } else {
    let next = 0;
    ids = request.calls.map((call) => (call.id === undefined ? undefined : String(++next)));
    wire = batchWire(request.calls, ids);
  }
  // Upstream batches hold only reads (the handler sends writes call by call): replayable.
  const options: AttemptOptions = {
    signal: request.signal,
    replayable: true,
    streamAfter: undefined,
    network: request.network,
    trace: request.trace,
  };
  const attempts: Attempt[] = [];
  // Failures of a client's batch are logged with its request id.
  const logged = request.trace === undefined ? deps : { ...deps, logger: request.trace.logger };
  for (const candidate of plan) {
    if (request.signal?.aborted) break;
    try {
      const matched = await runAttempt(deps, candidate, wire, options, batchAnswers, ids);
      recordSuccess(deps, request.network, candidate);
      if (attempts.length > 0) {
        logged.logger.info('batch succeeded after failover', {
          network: request.network,
          origin: candidate.origin.name,
          failed: attempts.map((a) => `${a.pool}/${a.origin}: ${a.reason}`),
        });
      }
      let whole = asIs !== undefined && matched.inOrder;
      const answers = matched.answers;
      if (chain !== undefined) {
        for (let i = 0; i < answers.length; i += 1) {
          const answer = answers[i];
          const call = request.calls[i] as BatchRequest['calls'][number];
          if (answer === undefined || !worthJudging(call.method, answer.outcomeKey, answer.valueKind)) continue;
          const context = {
            network: request.network,
            method: call.method,
            params: call.params,
            needs: needs[i] as CallNeeds,
            candidate,
          };
          // An answer the chain checks turn down goes out again on its own, with the per-call rules.
          if (judgeAnswer(chain, context, answer) === 'ok') continue;
          answers[i] = undefined;
          whole = false;
        }
      }
      const { pool, origin } = candidate;
      return { answers, pool: pool.name, origin: origin.name, whole: whole ? matched.body : undefined };
    } catch (err) {
      if (request.signal?.aborted) break;
      if (recordFailure(logged, candidate, err, request.network, 'batch', attempts).kind === 'busy') break;
    }
  }
  // Every origin answered, but none with a usable batch (some refuse batches or cap their size):
  // the calls go out one by one instead, with the usual per-call rules.
  if (
    !request.signal?.aborted &&
    attempts.length > 0 &&
    attempts.every((a) => a.kind === 'status' || a.kind === 'garbled')
  ) {
    logged.logger.info('no origin answered the batch; forwarding its calls one by one', {
      network: request.network,
      failed: describeAttempts(attempts),
    });
    return undefined;
  }
  throw exhausted(request.network, attempts);
}

/**
 * What an upstream batch needs from one origin, together: the widest block range its pinned calls span
 * (stretched to the network head when it also holds head-relative calls), else head-relative if any call
 * is, else nothing.
 */
function batchNeeds(needs: readonly CallNeeds[], networkHead: number | undefined): CallNeeds {
  let from = Number.POSITIVE_INFINITY;
  let to = -1;
  let head = false;
  for (const need of needs) {
    if (need.kind === 'head') head = true;
    else if (need.kind === 'block') {
      from = Math.min(from, need.from);
      to = Math.max(to, need.to);
    }
  }
  if (to < 0) return head ? { kind: 'head' } : NO_NEEDS;
  if (head && networkHead !== undefined) to = Math.max(to, networkHead);
  return { kind: 'block', from, to };
}

/** An origin's answer to one call of an upstream batch, read from its array element (bytes cut when asked for). */
class BatchReply implements UpstreamReply {
  constructor(
    readonly answer: BatchElementAnswer,
    readonly pool: string,
    readonly origin: string,
  ) {}

  get body(): Buffer {
    return this.answer.body;
  }

  get id(): BatchElementAnswer['id'] {
    return this.answer.id;
  }

  get outcome(): BatchElementAnswer['outcome'] {
    return this.answer.outcome;
  }
}

/** An upstream batch's answers matched to the ids sent (batch-wire.ts); anything else fails the attempt. */
function batchAnswers(
  res: ClientResponse,
  _attempt: LiveAttempt,
  ids: readonly (string | undefined)[],
): MatchedBatch & { body: Buffer } {
  const matched = matchBatch(res.body, ids);
  if (matched !== undefined) return { ...matched, body: res.body };
  throw new AttemptFailure(
    res.status >= 300 ? 'status' : 'garbled',
    res.status >= 300
      ? `HTTP ${res.status}`
      : res.body.length === 0
        ? 'empty body'
        : 'body is not a JSON-RPC batch answer to this request',
  );
}
