/**
 * Forwarding of one JSON-RPC call to the origins of a network (SPEC §2). This is the seam for anything
 * that sits between the gateway and the origins (a response cache wraps `Forwarder`).
 *
 * A method with a hook (hooks/registry.ts: eth_getLogs splitting, eth_sendRawTransaction's sends) that
 * claims the call is forwarded by its hook, whose every upstream call comes back here (`#forwardCall`,
 * with a plan of its own or to one chosen origin); a batch's calls a hook claims leave the upstream
 * batch and are forwarded one by one. Everything below is the path of every other call.
 *
 * The call goes out as the client's own bytes with only the id replaced by a small integer of ours; the
 * origin's body comes back untouched, with the span of its id, so the handler can splice the client's
 * raw id in. The attempts are the failsafe engine's (failsafe/engine.ts, whose rules are data in
 * failsafe/rules.ts; each attempt bounded by `gateway.request_timeout` or the method's `timeout`):
 *   - success: HTTP 2xx (or 4xx other than 401/403/407/408/429) whose body is a JSON-RPC response with
 *     our id and a `result` or `error`; an origin's own JSON-RPC error is a success (passed through),
 *     unless it is a provider's rate-limit answer (model/rate-limit-answers.ts): then `throttled`;
 *   - failure: connection error, timeout, HTTP 5xx/401/403/407/408, empty or garbled body, wrong id;
 *     HTTP 429 is `throttled`.
 * A read is retried on the next origin of the plan, up to `max_attempts` origins (gateway, or per
 * method), and may be hedged (networks.{name}.hedge). A write (eth_sendRawTransaction,
 * eth_sendTransaction) is retried only after a failure to connect, when the request surely never
 * reached the origin, and never hedged. Which outcome reaches the origin's health, its score and its
 * bench: the rules' table.
 * The order of origins per call is call-plan.ts's: router, chain-aware order (head-relative calls to
 * origins at the network head, pinned calls to origins that have the block), read-your-writes, filter
 * affinity, free connections first.
 * With a chain tracker, each whole answer to a read is checked (answer-checks.ts): a missing-data error,
 * or an answer other than asked (a lookup by hash answered with another hash, a head above the head
 * ceiling), sends the call on to the next origin (when no origin answers better, the last answer passes
 * through), and a null from an origin behind the chain, or a head below one already reported, is retried
 * once on the most advanced origin (whose answer then passes through, whatever it is). Neither counts
 * against the origin's health. An origin that takes a transaction becomes the client's origin for its
 * pending-state reads (write-affinity.ts), and an eth_sendRawTransaction the send hook had taken goes to
 * the transaction ledger (`sends`, SPEC §19; accepted-sends.ts) once, with every origin that took it.
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
 * When every attempt failed: 504 UPSTREAM_TIMEOUT if all of them timed out, 429 UPSTREAM_THROTTLED if
 * a read met only throttling, else 502 UPSTREAM_FAILED; `data.attempts` lists pool, origin name and
 * reason (never addresses: they may hold API keys). How failures are classified: attempt-failure.ts;
 * how an answer is checked: origin-answer.ts.
 * With `verify` on for the call (networks.{name}.verify or its method's, SPEC §18), a call whose method
 * has a check goes to verified/verified-calls.ts first (before any hook: a verified eth_getLogs is not
 * split), on the same engine and plan; what that does not verify comes back here and is forwarded as
 * above (its answer says `none`).
 * A config reload (`reconfigure`) changes `request_timeout`, `max_attempts` and the networks' `max_head_lag`,
 * `hedge`, `methods` and `verify` for the plans made and the attempts started from then on.
 */

import type { CallNeeds, ChainFeedback, ChainView } from '../../chain/types.js';
import type { NetworkConfig } from '../../config/schema.js';
import type { AcceptedSends } from '../../model/accepted-sends.js';
import type { VerifyFailureSink } from '../../model/verify-failures.js';
import { mostAdvanced } from '../../routing/chain-order.js';
import type { OutstandingRequests } from '../../routing/outstanding.js';
import type { Candidate, OriginRouter } from '../../routing/router.js';
import { callNeeds } from '../rpc/call-needs.js';
import type {
  BatchRequest,
  BatchResult,
  Forwarder,
  UpstreamReply,
  UpstreamRequest,
  VerifyMode,
} from '../rpc/forwarder.js';
import { withId } from '../rpc/id-splice.js';
import { STANDARD_METHODS } from '../rpc/methods.js';
import { tellLedger } from './accepted-sends.js';
import { type AnswerContext, judgeAnswer, reportPassedHead } from './answer-checks.js';
import { startAttempt } from './attempt.js';
import type { Attempt } from './attempt-failure.js';
import { CallPlanner, fixedPlan } from './call-plan.js';
import { ANSWERED, type FailsafeDeps, runFailsafe, VERDICT_EVENTS } from './failsafe/engine.js';
import { type CallRules, MethodRules } from './failsafe/method-rules.js';
import type { FilterAffinity } from './filter-affinity.js';
import type { CalledAnswer, HookUpstream, MethodHook } from './hooks/method-hook.js';
import { methodHooks } from './hooks/registry.js';
import type { OriginClients } from './origin-clients.js';
import { type CallAttempt, singleAnswer } from './single-answer.js';
import type { StreamSlots } from './stream-slots.js';
import { forwardUpstreamBatch } from './upstream-batch.js';
import { levelOf } from './verified/prepare.js';
import { VerifiedCalls, type VerifiedCallsDeps } from './verified/verified-calls.js';
import type { WriteAffinity } from './write-affinity.js';

/** A 2xx answer that grows past this many bytes streams to the client (when the request allows it). */
export const STREAM_AFTER_BYTES = 1_048_576;

export interface OriginForwarderDeps extends FailsafeDeps {
  router: OriginRouter;
  clients: OriginClients;
  outstanding: OutstandingRequests;
  filters: FilterAffinity;
  /** Per-client stream slots (gateway.max_streams_per_client); streams are unbounded without. */
  streamSlots?: StreamSlots | undefined;
  requestTimeoutMs: number;
  maxAttempts: number;
  /**
   * The chain tracker (chain/): chain-aware order and answer checks; without it, neither. When it keeps the
   * trust anchor too (the tracker and a worker's replica do: gateway/chain-port.ts), `verify` is honoured
   * (SPEC §18, verified/); a chain without one (some tests) verifies nothing.
   */
  chain?: (ChainView & ChainFeedback) | VerifiedCallsDeps['chain'] | undefined;
  /** Read-your-writes (gateway.sticky_after_write). */
  writes?: WriteAffinity | undefined;
  /** The transaction ledger (SPEC §19): told of each eth_sendRawTransaction the origins accepted. */
  sends?: AcceptedSends | undefined;
  /** Per network: `max_head_lag`, the failsafe rules (`hedge`, `methods`) and `verify`, `chain_id`. */
  networks?: Readonly<Record<string, Pick<NetworkConfig, 'max_head_lag'> & Partial<NetworkConfig>>> | undefined;
  /** Where answers that failed verification are reported (the integrity alert). */
  verifyFailures?: VerifyFailureSink | undefined;
}

/** The per-method rules from the settings in force (at start and at each reload). */
/** `verifyMode` of every call on a network that verifies nothing. */
const NOT_VERIFIED = { mode: 'off', alone: false } as const;

function methodRules(deps: OriginForwarderDeps): MethodRules {
  return new MethodRules(deps.networks, { timeoutMs: deps.requestTimeoutMs, maxAttempts: deps.maxAttempts });
}

const NO_NEEDS: CallNeeds = { kind: 'none' };

export class OriginForwarder implements Forwarder {
  readonly #deps: OriginForwarderDeps;
  readonly #planner: CallPlanner;
  #rules: MethodRules;
  /** Special methods' hooks (hooks/registry.ts): eth_getLogs splitting, sends. */
  readonly #hooks: ReadonlyMap<string, MethodHook>;
  readonly #verified: VerifiedCalls | undefined;
  #nextId = 1;

  constructor(deps: OriginForwarderDeps) {
    // Its own copy: `reconfigure` changes it, and the planner, the hooks and verified calls read it.
    this.#deps = { ...deps };
    this.#planner = new CallPlanner(this.#deps);
    this.#rules = methodRules(this.#deps);
    this.#hooks = methodHooks(this.#hookUpstream(this.#deps));
    const { chain } = deps;
    this.#verified =
      chain === undefined || !('anchor' in chain)
        ? undefined
        : new VerifiedCalls(
            {
              ...this.#deps,
              chain,
              // Read at call time, like the hooks' settings.
              chainId: (network) => this.#deps.networks?.[network]?.chain_id,
              failures: deps.verifyFailures,
            },
            this.#planner,
          );
  }

  /** Reloaded settings (see the header). */
  reconfigure(settings: Pick<OriginForwarderDeps, 'requestTimeoutMs' | 'maxAttempts' | 'networks'>): void {
    Object.assign(this.#deps, settings);
    this.#rules = methodRules(this.#deps);
  }

  verifyMode(network: string, method: string): { readonly mode: VerifyMode; readonly alone: boolean } {
    if (!this.#rules.verifies(network)) return NOT_VERIFIED;
    const mode = this.#rules.forCall(network, method).verify;
    return { mode, alone: levelOf(STANDARD_METHODS[method]?.verify, mode) !== undefined };
  }

  assertRoutable(network: string, pools: readonly string[]): void {
    this.#deps.router.assertRoutable(network, pools);
  }

  forward(request: UpstreamRequest): Promise<UpstreamReply> {
    const { method } = request.call;
    if (this.#verified !== undefined && STANDARD_METHODS[method]?.verify !== undefined) {
      const rules = this.#rules.forCall(request.network, method);
      if (rules.verify !== 'off') return this.#forwardVerified(this.#verified, request, rules);
    }
    return this.#forwardPlain(request);
  }

  /** A call whose method has a check: verified, or (verified/ declines it) forwarded as any other. */
  async #forwardVerified(verified: VerifiedCalls, request: UpstreamRequest, rules: CallRules): Promise<UpstreamReply> {
    return (await verified.forward(request, rules)) ?? this.#forwardPlain(request);
  }

  #forwardPlain(request: UpstreamRequest): Promise<UpstreamReply> {
    const hook = this.#hooks.get(request.call.method);
    if (hook === undefined || !hook.claims(request)) return this.#forwardCall(request, undefined, undefined);
    const forwarded = hook.forward(request);
    const sends = this.#deps.sends;
    if (sends === undefined) return forwarded;
    return forwarded.then((reply) => tellLedger(sends, request, reply, this.#deps.clock.now()));
  }

  /** The upstream calls a method hook makes (hooks/method-hook.ts): each through the engine. */
  #hookUpstream(deps: OriginForwarderDeps): HookUpstream {
    return {
      clock: deps.clock,
      logger: deps.logger,
      streamSlots: deps.streamSlots,
      streamAfter: STREAM_AFTER_BYTES,
      // Read at call time: a reload that replaces `networks` applies to the next call.
      settings: (network) => this.#deps.networks?.[network],
      networkHead: (network) => this.#deps.chain?.networkHead(network),
      call: (request) => this.#called(request, undefined),
      callOn: (request, candidate) => this.#called(request, candidate),
      origins: (request) => this.#deps.router.plan(request.network, request.pools, request.client),
      stick: (request, candidate) => this.#stick(request, candidate),
    };
  }

  /** A hook's call: its answer and the origin it came from. */
  async #called(request: UpstreamRequest, only: Candidate | undefined): Promise<CalledAnswer> {
    let from: Candidate | undefined;
    const reply = await this.#forwardCall(request, only, (candidate) => {
      from = candidate;
    });
    return { reply, candidate: from as Candidate };
  }

  /**
   * One call through the failsafe engine: with its own plan, or to `only` that origin (a hook's call);
   * `answeredBy` hears which origin the answer came from (the usual call asks nothing: no extra object).
   */
  async #forwardCall(
    request: UpstreamRequest,
    only: Candidate | undefined,
    answeredBy: ((candidate: Candidate) => void) | undefined,
  ): Promise<UpstreamReply> {
    const { chain } = this.#deps;
    const { call, network } = request;
    const write = STANDARD_METHODS[call.method]?.write === true;
    const needs = chain === undefined ? NO_NEEDS : callNeeds(call.method, call.params, chain, network);
    const plan = only === undefined ? this.#planner.forCall(request, needs) : fixedPlan([only]);
    const rules = this.#rules.forCall(network, call.method);
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
      timeoutMs: rules.timeoutMs,
      trace: request.trace,
      headerLines: request.trace?.originHeader,
      idText: call.id === undefined ? undefined : idText,
      streamFor,
      slots: this.#deps.streamSlots,
    };
    const context = (candidate: Candidate): AnswerContext => ({
      network,
      method: call.method,
      params: call.params,
      needs,
      candidate,
    });
    const answer = await runFailsafe<UpstreamReply>(this.#deps, {
      network,
      method: call.method,
      trace: request.trace,
      calls: write ? 'write' : 'read',
      plan,
      signal: request.signal,
      rules,
      start: (candidate) => startAttempt(this.#deps, candidate, wire, options, singleAnswer, options),
      judge: (candidate, reply) =>
        chain === undefined ? ANSWERED : VERDICT_EVENTS[judgeAnswer(chain, context(candidate), reply)],
      mostAdvanced: (candidate) =>
        chain === undefined
          ? undefined
          : mostAdvanced(plan.all(), chain, candidate, chain.origin(candidate.pool.id, candidate.origin.name)?.head),
      discard: (reply) => reply.rest?.destroy(),
    });
    // (Only an upstream batch hands an unanswered call back; this one has no `unanswered`.)
    if (answer === undefined) throw new Error('the failsafe engine gave no answer');
    const { reply, candidate } = answer;
    if (answer.event === 'behind-again' && chain !== undefined) reportPassedHead(chain, context(candidate), reply);
    if (answer.event !== 'fallback') {
      this.#deps.filters.record(network, call, reply.body, { pool: reply.pool, origin: reply.origin });
      // A write sent to one chosen origin (a hook's) leaves read-your-writes to the hook.
      this.#succeeded(request, candidate, reply, answer.failures, write && only === undefined);
    }
    answeredBy?.(candidate);
    return reply;
  }

  /** A call answered: read-your-writes for a taken transaction, and a log line after failover. */
  #succeeded(
    request: UpstreamRequest,
    candidate: Candidate,
    reply: UpstreamReply,
    attempts: readonly Attempt[],
    write: boolean,
  ): void {
    if (write && reply.outcome?.key === 'result') this.#stick(request, candidate);
    if (attempts.length > 0) {
      (request.trace?.logger ?? this.#deps.logger).info('request succeeded after failover', {
        network: request.network,
        method: request.call.method,
        origin: candidate.origin.name,
        failed: attempts.map((a) => `${a.pool}/${a.origin}: ${a.reason}`),
      });
    }
  }

  /** Read-your-writes: the client's pending-state reads go first to the origin that took its transaction. */
  #stick(request: UpstreamRequest, candidate: Candidate): void {
    if (request.client === undefined) return;
    this.#deps.writes?.record(request.client, request.network, {
      poolId: candidate.pool.id,
      origin: candidate.origin.name,
    });
  }

  /**
   * The calls of a read-only batch (no writes, no filter calls: the handler sends those one by one) as
   * one upstream batch (upstream-batch.ts), through the same engine.
   */
  forwardBatch(request: BatchRequest): Promise<BatchResult> {
    const { network, calls } = request;
    const claimed = calls.map((call) => this.#hooks.get(call.method)?.claims({ network, call }) === true);
    if (!claimed.includes(true)) return forwardUpstreamBatch(this.#deps, this.#planner, this.#rules, request);
    return this.#batchWithout(request, claimed);
  }

  /**
   * A batch some of whose calls a hook forwards (a wide eth_getLogs to split): the others go as one
   * upstream batch (not `asIs`: it no longer holds every call), and the claimed ones get no outcome, so
   * the handler forwards each on its own, through its hook.
   */
  async #batchWithout(request: BatchRequest, claimed: readonly boolean[]): Promise<BatchResult> {
    const calls = request.calls.filter((_, i) => !claimed[i]);
    const sent =
      calls.length === 0
        ? undefined
        : await forwardUpstreamBatch(this.#deps, this.#planner, this.#rules, {
            network: request.network,
            pools: request.pools,
            calls,
            signal: request.signal,
          });
    let k = 0;
    return { outcomes: request.calls.map((_, i) => (claimed[i] ? undefined : sent?.outcomes[k++])) };
  }
}
