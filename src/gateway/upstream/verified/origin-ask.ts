/**
 * One verified attempt's calls to its origin (SPEC §18, verified-calls.ts): the client's call itself and
 * the calls its check needs (eth_getProof, the block, its receipts, …), each sent to that one origin as
 * an attempt of its own (attempt.ts: the same connection pool, the client's signal, the call's timeout
 * for each, the same classification of failures; never streamed). `forward` answers the client's call as
 * an UpstreamReply, its body byte for byte; `call` answers one of ours with its parsed result, or throws
 * OriginRefused for an error answer. A result whose objects repeat a key is refused before it is read
 * (`resultOf`): this parse and a client's could disagree about which copy counts.
 */

import type { Candidate } from '../../../routing/router.js';
import { VerificationError } from '../../../verify/index.js';
import type { ClientSignal, UpstreamReply } from '../../rpc/forwarder.js';
import { duplicateMember } from '../../rpc/json-members.js';
import { errorOf } from '../answer-checks.js';
import { type AttemptDeps, startAttempt } from '../attempt.js';
import { type CallAttempt, singleAnswer } from '../single-answer.js';

/** Our id in every call of an ask (each goes out as a request of its own). */
export const ASK_ID = '1';

/** An origin answered one of our calls with a JSON-RPC error. */
export class OriginRefused extends Error {
  override readonly name = 'OriginRefused';

  constructor(
    readonly method: string,
    readonly error: unknown,
  ) {
    const message = (error as { message?: unknown } | null)?.message;
    super(`${method} answered an error${typeof message === 'string' ? ` (${message.slice(0, 200)})` : ''}`);
  }
}

export class OriginAsk {
  readonly candidate: Candidate;
  readonly #deps: AttemptDeps;
  readonly #options: CallAttempt;
  #calls = 0;

  constructor(deps: AttemptDeps, candidate: Candidate, signal: ClientSignal | undefined, timeoutMs: number) {
    this.#deps = deps;
    this.candidate = candidate;
    this.#options = {
      signal,
      replayable: true,
      streamAfter: undefined,
      timeoutMs,
      idText: ASK_ID,
      streamFor: undefined,
      slots: undefined,
    };
  }

  /** Origin calls made so far (the cost docs/verification.md counts). */
  get calls(): number {
    return this.#calls;
  }

  /** The client's call as `wire` (our ASK_ID in place of its id): the origin's answer as it came. */
  forward(wire: Buffer): Promise<UpstreamReply> {
    this.#calls += 1;
    return startAttempt(this.#deps, this.candidate, wire, this.#options, singleAnswer, this.#options).result;
  }

  /** One call of ours: its result; an error answer throws OriginRefused. */
  async call(method: string, params: readonly unknown[]): Promise<unknown> {
    const wire = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: Number(ASK_ID), method, params }));
    const reply = await this.forward(wire);
    const outcome = reply.outcome;
    if (outcome?.key === 'error')
      throw new OriginRefused(method, errorOf(reply.body, outcome.value.start, outcome.value.end));
    return resultOf(reply);
  }
}

/** The reply's `result`, parsed; refuses one whose objects repeat a key (see the header). */
export function resultOf(reply: UpstreamReply): unknown {
  const value = reply.outcome?.value;
  if (value === undefined || reply.outcome?.key !== 'result') return undefined;
  const text = reply.body.subarray(value.start, value.end);
  const twice = duplicateMember(text);
  if (twice !== undefined) {
    throw new VerificationError({ check: 'answer-shape', reason: `the answer names ${twice.join('.')} twice` });
  }
  return JSON.parse(text.toString('utf8')) as unknown;
}
