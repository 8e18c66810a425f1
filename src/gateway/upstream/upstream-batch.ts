/**
 * Upstream batches (proxyd-style): the read-only calls of a client's batch go to one origin as one JSON-RPC
 * batch (batch-wire.ts builds and matches the bytes), through the same failsafe engine as single calls
 * (failsafe/engine.ts: the same rules, hedging and throttling; the batch's rules are the widest timeout
 * and fewest attempts of its methods, failsafe/method-rules.ts), origin after origin of the batch's plan
 * (call-plan.ts, for what the calls need together) until one answers as a whole. With a chain tracker
 * each answer element is checked like a single call's (answer-checks.ts); one the checks turn down
 * (missing data, a null or a head from behind the chain, an answer other than asked) is left out, so the
 * handler forwards that call on its own with the per-call rules. So is an element answered with a
 * provider's rate-limit error (some providers cap a batch's calls per second: QuickNode answers the calls
 * over the cap that way), and the origin is benched (`partly-throttled`); a batch whose every answer is
 * one is `throttled`.
 */
import type { CallNeeds, ChainFeedback, ChainView } from '../../chain/types.js';
import type { Logger } from '../../log.js';
import type { Candidate } from '../../routing/router.js';
import { callNeeds } from '../rpc/call-needs.js';
import type { BatchOutcome, BatchRequest, BatchResult, UpstreamReply } from '../rpc/forwarder.js';
import { judgeAnswer, worthJudging } from './answer-checks.js';
import { type AttemptDeps, type AttemptOptions, type LiveAttempt, startAttempt } from './attempt.js';
import { type Attempt, AttemptFailure, describeAttempts } from './attempt-failure.js';
import { type BatchElementAnswer, batchWire, type MatchedBatch, matchBatch } from './batch-wire.js';
import type { CallPlanner } from './call-plan.js';
import { ANSWERED, type FailsafeDeps, type Judged, runFailsafe } from './failsafe/engine.js';
import type { MethodRules } from './failsafe/method-rules.js';
import { rateLimited } from './origin-answer.js';
import type { ClientResponse } from './origin-clients.js';

export interface UpstreamBatchDeps extends AttemptDeps, FailsafeDeps {
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
  rules: MethodRules,
  request: BatchRequest,
): Promise<BatchResult> {
  try {
    const sent = await sendBatch(deps, planner, rules, request);
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

  resultAt(index: number): boolean {
    return this.#sent.answers[index]?.outcomeKey === 'result';
  }
}

/** An origin's batch answer as the engine sees it: the matched answers, and what the checks left out. */
interface BatchAnswers extends MatchedBatch {
  readonly body: Buffer;
  /** Answers left out (rate-limited here, or turned down by the chain checks): not the client's whole answer. */
  removed: boolean;
  /** Answers left out for a rate-limit error, and the wait they asked for. */
  readonly throttled: { readonly count: number; readonly retryAfterMs: number | undefined } | undefined;
}

/** The origin's answers per call; undefined when no origin took the batch (send the calls one by one). */
async function sendBatch(
  deps: UpstreamBatchDeps,
  planner: CallPlanner,
  methodRules: MethodRules,
  request: BatchRequest,
): Promise<SentBatch | undefined> {
  const { chain } = deps;
  const { network } = request;
  const needs =
    chain === undefined ? [] : request.calls.map((call) => callNeeds(call.method, call.params, chain, network));
  const plan = planner.forBatch(network, request.pools, batchNeeds(needs, chain?.networkHead(network)));
  const { ids, wire } = upstreamBody(request);
  const rules = methodRules.forBatch(
    network,
    request.calls.map((call) => call.method),
  );
  // Upstream batches hold only reads (the handler sends writes call by call): replayable.
  const options: AttemptOptions = {
    signal: request.signal,
    replayable: true,
    streamAfter: undefined,
    timeoutMs: rules.timeoutMs,
    trace: request.trace,
    headerLines: request.trace?.originHeader,
  };
  // Lines about a client's batch carry its request id (its logger is made only when a line is written).
  const logger = (): Logger => request.trace?.logger ?? deps.logger;
  const answer = await runFailsafe<BatchAnswers>(deps, {
    network,
    method: 'batch',
    trace: request.trace,
    calls: 'read',
    plan,
    signal: request.signal,
    rules,
    start: (candidate) => startAttempt(deps, candidate, wire, options, batchAnswers, ids),
    judge: (candidate, answers) => judgeBatch(deps, request, needs, candidate, answers),
    mostAdvanced: () => undefined,
    discard: () => {},
    unanswered: (failures) => oneByOne(logger(), request, failures),
  });
  if (answer === undefined) return undefined;
  const { reply, candidate, failures } = answer;
  if (failures.length > 0) {
    logger().info('batch succeeded after failover', {
      network,
      origin: candidate.origin.name,
      failed: failures.map((a) => `${a.pool}/${a.origin}: ${a.reason}`),
    });
  }
  const whole = request.asIs !== undefined && reply.inOrder && !reply.removed;
  const { pool, origin } = candidate;
  return { answers: reply.answers, pool: pool.name, origin: origin.name, whole: whole ? reply.body : undefined };
}

/**
 * What goes upstream: the client's own body and ids when it can go as it is (BatchRequest.asIs); else
 * ids of ours, which need only be unique inside one upstream request (its answer is matched on its
 * own): 1..n.
 */
function upstreamBody(request: BatchRequest): { ids: readonly (string | undefined)[]; wire: Buffer } {
  const { asIs } = request;
  if (asIs !== undefined) return { ids: asIs.ids, wire: asIs.body };
  let next = 0;
  const ids = request.calls.map((call) => (call.id === undefined ? undefined : String(++next)));
  return { ids, wire: batchWire(request.calls, ids) };
}

/**
 * Every origin answered, but none with a usable batch (some refuse batches or cap their size): the
 * calls go out one by one instead, with the usual per-call rules.
 */
function oneByOne(logger: Logger, request: BatchRequest, failures: readonly Attempt[]): boolean {
  if (request.signal?.aborted || failures.length === 0) return false;
  if (!failures.every((a) => a.kind === 'status' || a.kind === 'garbled')) return false;
  logger.info('no origin answered the batch; forwarding its calls one by one', {
    network: request.network,
    failed: describeAttempts(failures),
  });
  return true;
}

/**
 * The chain checks of each answer element (one turned down is left out: it goes out again on its own,
 * with the per-call rules); `partly-throttled` when batchAnswers left rate-limited elements out.
 */
function judgeBatch(
  deps: UpstreamBatchDeps,
  request: BatchRequest,
  needs: readonly CallNeeds[],
  candidate: Candidate,
  batch: BatchAnswers,
): Judged {
  const { chain } = deps;
  const answers = batch.answers;
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
      if (judgeAnswer(chain, context, answer) === 'ok') continue;
      answers[i] = undefined;
      batch.removed = true;
    }
  }
  const throttled = batch.throttled;
  return throttled === undefined ? ANSWERED : { event: 'partly-throttled', retryAfterMs: throttled.retryAfterMs };
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

/**
 * An upstream batch's answers matched to the ids sent (batch-wire.ts); anything else fails the attempt.
 * Elements answered with a provider's rate-limit error are left out (`throttled`); when every answer
 * is one, the attempt fails as `throttled`.
 */
function batchAnswers(res: ClientResponse, _attempt: LiveAttempt, ids: readonly (string | undefined)[]): BatchAnswers {
  const matched = matchBatch(res.body, ids);
  if (matched === undefined) {
    throw new AttemptFailure(
      res.status >= 300 ? 'status' : 'garbled',
      res.status >= 300
        ? `HTTP ${res.status}`
        : res.body.length === 0
          ? 'empty body'
          : 'body is not a JSON-RPC batch answer to this request',
    );
  }
  const answers = matched.answers;
  let count = 0;
  let kept = 0;
  let failure: AttemptFailure | undefined;
  for (let i = 0; i < answers.length; i += 1) {
    const answer = answers[i];
    if (answer === undefined) continue;
    kept += 1;
    if (answer.outcomeKey !== 'error') continue;
    const throttled = rateLimited(
      answer.array,
      answer.start + answer.valueStart,
      answer.start + answer.valueEnd,
      undefined,
    );
    if (throttled === undefined) continue;
    failure ??= throttled;
    answers[i] = undefined;
    count += 1;
  }
  if (failure !== undefined && count === kept) throw failure;
  return {
    answers,
    inOrder: matched.inOrder,
    body: res.body,
    removed: count > 0,
    throttled: failure === undefined ? undefined : { count, retryAfterMs: failure.retryAfterMs },
  };
}
