/**
 * One call's answer from an origin's HTTP answer (the `check` of its attempts: attempt.ts): ours — our
 * id, and a `result` or `error` — else the attempt's failure (`status`, `garbled`; a provider's
 * rate-limit answer is `throttled`). A whole answer is checked at once (no promise). A large answer that
 * started streaming (origin-forwarder.ts) streams on when its first bytes show our id, once a stream
 * slot of its client is free; else (the id comes late, e.g. after the result) it is collected whole and
 * checked like any other.
 */
import type { Readable } from 'node:stream';
import type { UpstreamReply } from '../rpc/forwarder.js';
import type { AttemptOptions, LiveAttempt } from './attempt.js';
import { AttemptFailure } from './attempt-failure.js';
import { answerParts, collect, headId, rateLimited } from './origin-answer.js';
import type { ClientResponse } from './origin-clients.js';
import { type StreamSlots, waitForSlot } from './stream-slots.js';

/** What each attempt of one call needs: the runner's options and what its answer is checked against. */
export interface CallAttempt extends AttemptOptions {
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
export function singleAnswer(
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
  if (parts !== undefined && parts.outcome.key === 'error') {
    const reply = { body, id: parts.id, pool, origin, outcome: parts.outcome };
    const throttled = rateLimited(body, parts.outcome.value.start, parts.outcome.value.end, reply);
    if (throttled !== undefined) throw throttled;
    return reply;
  }
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
