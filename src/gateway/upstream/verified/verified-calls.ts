/**
 * Verified calls (SPEC §18): a call whose method has a check (rpc/methods.ts `verify`) on a network or
 * method with `verify` on, answered only once its answer is proven. The origin forwarder hands them here
 * (origin-forwarder.ts); anything this does not verify it hands back (undefined) to be forwarded as before.
 *
 * 1. Before any origin is asked (prepare.ts): the block the call is checked at — `latest` is the newest
 *    trusted block, a number the trusted block there (the chain tracker's anchor, which may ask origins)
 *    — and its params pinned to it. No trusted block: -32050 at once, no origin blamed.
 * 2. The failsafe engine walks the call's plan as for any read (failsafe/engine.ts). Each attempt is one
 *    origin doing all the check needs (origin-ask.ts; each call of it with the call's timeout): the
 *    client's call and what proves it (block-checks.ts, state-checks.ts, logs-check.ts,
 *    execution-check.ts; proven blocks kept in proven-blocks.ts). Its answer carries what was proven
 *    (`verified`); the chain checks judge it like any answer (answer-checks.ts).
 * 3. A check that fails is the attempt's failure `unverified` (failsafe/rules.ts: the next origin, a strike
 *    in the origin's score, never kept as an answer), counted in
 *    `switchyard_verify_failures_total{network,origin,method}`, logged at warn and reported to the
 *    integrity alert (model/verify-failures.ts). An origin that cannot be checked (it answers one of the
 *    check's calls with an error) is `unverified` too, but neither counted nor reported: it told no lie.
 *    No trusted block for what an answer names (a receipt's block) is `unanchored`: the engine stops.
 * 4. When no origin's answer verifies the client gets ANSWER_UNVERIFIED (-32050) naming the method and
 *    block, never an unverified answer; so does an origin's own error answer that comes after another
 *    origin's answer failed (SPEC §18: it passes through otherwise).
 */
import type { ChainFeedback, ChainView } from '../../../chain/types.js';
import { SwitchyardError } from '../../../errors/base.js';
import type { VerifyFailureSink } from '../../../model/verify-failures.js';
import { mostAdvanced } from '../../../routing/chain-order.js';
import type { Candidate } from '../../../routing/router.js';
import { isVerificationError, type VerificationError } from '../../../verify/index.js';
import { callNeeds } from '../../rpc/call-needs.js';
import type { UpstreamReply, UpstreamRequest } from '../../rpc/forwarder.js';
import { withId } from '../../rpc/id-splice.js';
import { STANDARD_METHODS, type VerifyKind } from '../../rpc/methods.js';
import { type AnswerContext, judgeAnswer } from '../answer-checks.js';
import type { AttemptDeps } from '../attempt.js';
import { type Attempt, AttemptFailure, describeAttempts } from '../attempt-failure.js';
import type { CallPlanner } from '../call-plan.js';
import { type FailsafeDeps, runFailsafe, VERDICT_EVENTS } from '../failsafe/engine.js';
import type { CallRules } from '../failsafe/method-rules.js';
import { checkBlock, checkBlockReceipts, checkReceipt } from './block-checks.js';
import { type BlockTarget, describeTarget, type TargetChain } from './block-target.js';
import { type Check, type CheckContext, Unanchored, Unprovable } from './check-context.js';
import { checkExecution } from './execution-check.js';
import { checkLogs } from './logs-check.js';
import { ASK_ID, OriginAsk, OriginRefused } from './origin-ask.js';
import { levelOf, prepareCall } from './prepare.js';
import { ProvenBlocks } from './proven-blocks.js';
import { checkAccount, checkCode, checkProof, checkStorage } from './state-checks.js';

export interface VerifiedCallsDeps extends FailsafeDeps, AttemptDeps {
  readonly chain: TargetChain & ChainView & ChainFeedback;
  /** The network's chain id (local execution needs it), read per call. */
  chainId(network: string): number | undefined;
  /** Where failed answers are reported (the integrity alert); none: they are only counted and logged. */
  readonly failures?: VerifyFailureSink | undefined;
}

const CHECKS: Readonly<Record<VerifyKind, Check>> = {
  block: checkBlock,
  receipt: checkReceipt,
  'block-receipts': checkBlockReceipts,
  logs: checkLogs,
  account: checkAccount,
  storage: checkStorage,
  code: checkCode,
  proof: checkProof,
  call: checkExecution,
  estimate: checkExecution,
};

/** The header every answer to a verified call that fails carries (the handler adds it to the rest). */
const UNVERIFIED_HEADERS = { 'x-switchyard-verified': 'none' };

export class VerifiedCalls {
  readonly #deps: VerifiedCallsDeps;
  readonly #planner: CallPlanner;
  readonly #blocks = new ProvenBlocks();

  constructor(deps: VerifiedCallsDeps, planner: CallPlanner) {
    this.#deps = deps;
    this.#planner = planner;
  }

  /** The call's verified answer; undefined when it is not verified (forward it as before). */
  async forward(request: UpstreamRequest, rules: CallRules): Promise<UpstreamReply | undefined> {
    const { call, network } = request;
    const kind = STANDARD_METHODS[call.method]?.verify;
    const level = levelOf(kind, rules.verify);
    if (kind === undefined || level === undefined || rules.verify === 'off' || call.id === undefined) return undefined;
    const { chain } = this.#deps;
    const prepared = await prepareCall(chain, network, call, kind);
    if (prepared.kind === 'unprovable') return undefined;
    if (prepared.kind === 'unanchored') throw unverified(network, call.method, prepared.asked, [], NO_ANCHOR);
    const { params, target } = prepared;
    const pinned = params === call.params;
    const base: Omit<CheckContext, 'ask'> = {
      network,
      call,
      params,
      target,
      mode: rules.verify,
      level,
      blocks: this.#blocks,
      chain,
      chainId: BigInt(this.#deps.chainId(network) ?? 1),
      wire: pinned
        ? withId(call.raw, call.id, ASK_ID)
        : Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: Number(ASK_ID), method: call.method, params })),
    };
    const where = blockOf(target);
    const needs = callNeeds(call.method, params, chain, network);
    const plan = this.#planner.forCall(request, needs);
    const judging = (candidate: Candidate): AnswerContext => ({
      network,
      method: call.method,
      params,
      needs,
      candidate,
    });
    let failures: readonly Attempt[] = [];
    const answer = await runFailsafe<UpstreamReply>(this.#deps, {
      network,
      method: call.method,
      calls: 'read',
      plan,
      signal: request.signal,
      rules,
      start: (candidate) => ({ result: this.#attempt(candidate, base, CHECKS[kind], request, rules), live: undefined }),
      judge: (candidate, reply) => VERDICT_EVENTS[judgeAnswer(chain, judging(candidate), reply)],
      mostAdvanced: (candidate) =>
        mostAdvanced(plan.all(), chain, candidate, chain.origin(candidate.pool.id, candidate.origin.name)?.head),
      discard: () => {},
      unanswered: (attempts) => {
        failures = attempts;
        return attempts.some(failedCheck);
      },
    });
    const described = where ?? describeParams(params);
    if (answer === undefined) throw unverified(network, call.method, described, failures);
    const { reply } = answer;
    if (reply.verified === undefined && reply.outcome?.key === 'error' && answer.failures.some(failedCheck)) {
      throw unverified(network, call.method, described, answer.failures);
    }
    return reply;
  }

  /** One origin: the check, its failure as the attempt's (see the header). */
  async #attempt(
    candidate: Candidate,
    base: Omit<CheckContext, 'ask'>,
    check: Check,
    request: UpstreamRequest,
    rules: CallRules,
  ): Promise<UpstreamReply> {
    const ask = new OriginAsk(this.#deps, candidate, request.signal, rules.timeoutMs);
    const context: CheckContext = { ...base, ask };
    try {
      return await check(context);
    } catch (err) {
      if (err instanceof Unprovable) {
        const { call } = base;
        return ask.forward(call.id === undefined ? call.raw : withId(call.raw, call.id, ASK_ID));
      }
      throw this.#failure(err, context);
    }
  }

  #failure(err: unknown, context: CheckContext): unknown {
    const { call } = context;
    const at = context.target === undefined ? '' : ` at ${describeTarget(context.target)}`;
    if (err instanceof Unanchored) {
      return new AttemptFailure('unanchored', `${call.method}: no trusted block for ${err.asked}`, { cause: err });
    }
    if (err instanceof OriginRefused) {
      return new AttemptFailure('unverified', `${call.method}${at} could not be checked: ${err.message}`, {
        cause: err,
      });
    }
    if (!isVerificationError(err)) return err;
    this.#report(context, err);
    return new AttemptFailure('unverified', `${call.method}${at}: ${err.message}`, { cause: err });
  }

  /** A failed check: counted, logged and reported to the integrity alert. */
  #report(context: CheckContext, err: VerificationError): void {
    const { call, network, ask } = context;
    const { pool, origin } = ask.candidate;
    const block = err.failure.block === undefined ? blockOf(context.target) : Number(err.failure.block);
    this.#deps.metrics?.verifyFailure(network, origin.name, call.method);
    this.#deps.logger.warn('origin answer failed verification', {
      network,
      method: call.method,
      pool: pool.name,
      origin: origin.name,
      block,
      check: err.failure.check,
      reason: err.failure.reason,
    });
    this.#deps.failures?.failed({
      network,
      poolId: pool.id,
      origin: origin.name,
      method: call.method,
      block,
      check: err.failure.check,
      reason: err.failure.reason,
    });
  }
}

const NO_ANCHOR =
  'no trusted block: origins in verify_anchor.quorum pools must report the same hash (or a verify_anchor.origins origin)';

/** A check failed on an origin, or had no trusted block: the call then answers -32050. */
function failedCheck(attempt: Attempt): boolean {
  return attempt.kind === 'unverified' || attempt.kind === 'unanchored';
}

function unverified(
  network: string,
  method: string,
  block: number | string,
  attempts: readonly Attempt[],
  why = describeAttempts(attempts),
): SwitchyardError {
  const at = typeof block === 'number' ? `block ${block}` : block;
  return new SwitchyardError(
    'ANSWER_UNVERIFIED',
    `No answer to ${method} at ${at} on ${network} could be verified (${why}).`,
    {
      details: { method, block, attempts: attempts.map(({ pool, origin, reason }) => ({ pool, origin, reason })) },
      headers: UNVERIFIED_HEADERS,
    },
  );
}

function blockOf(target: BlockTarget | undefined): number | string | undefined {
  return target === undefined ? undefined : target.kind === 'trusted' ? target.block.number : target.hash;
}

/** What a call without a block names, for the message: its first param (a hash, a filter's range). */
function describeParams(params: readonly unknown[]): string {
  const first = params[0];
  if (typeof first === 'string') return first;
  const filter = first as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown } | undefined;
  if (typeof filter?.blockHash === 'string') return filter.blockHash;
  return `blocks ${String(filter?.fromBlock)}–${String(filter?.toBlock)}`;
}
