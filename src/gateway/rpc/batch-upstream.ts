/**
 * Which calls of a client's batch go upstream together (handler.ts answers the batch), and in what form:
 * - the eligible calls (valid, allowed, not answered by the connection, not filter calls: the handler's
 *   `eligible`) go to the forwarder's `forwardBatch` as one upstream batch, when the forwarder can, the
 *   batch holds no write (writes keep their per-call rule: the whole batch then goes call by call) and
 *   at least two calls are eligible;
 * - when every element is eligible and every id is plain and unique (`plainIds`), the request is `asIs`:
 *   the client's body itself goes upstream and answers are matched back by the client's ids.
 * Outcomes come back one per element (undefined: not in the upstream batch, or missing from the origin's
 * array — the handler forwards it on its own).
 */
import type { BatchOutcome, BatchRequest, BatchResult, ClientSignal, Forwarder } from './forwarder.js';
import { STANDARD_METHODS } from './methods.js';
import { PlainIds } from './plain-id.js';
import type { Element, RpcCall } from './request.js';
import type { RequestTrace } from './request-trace.js';

export interface UpstreamBatchInput {
  readonly network: string;
  readonly pools: readonly string[];
  readonly elements: readonly Element[];
  /** The client's batch as it arrived. */
  readonly body: Buffer;
  readonly signal: ClientSignal | undefined;
  /** The client request (forwarder.ts BatchRequest.trace). */
  readonly trace?: RequestTrace | undefined;
  /** The batch's plain ids when parseBody read them (ParsedBody.plainIds), false when it found some not plain. */
  readonly plainIds?: readonly string[] | false | undefined;
  /** Whether a valid call may join the upstream batch. */
  readonly eligible: (call: RpcCall) => boolean;
}

/** The upstream batch's result per element, or undefined when the batch goes call by call. */
export function upstreamBatch(forwarder: Forwarder, input: UpstreamBatchInput): Promise<BatchResult> | undefined {
  const forwardBatch = forwarder.forwardBatch;
  if (forwardBatch === undefined) return undefined;
  const { elements } = input;
  const indexes: number[] = [];
  const calls: RpcCall[] = [];
  for (let i = 0; i < elements.length; i += 1) {
    const element = elements[i] as Element;
    if (!element.ok) continue;
    const call = element.call;
    if (STANDARD_METHODS[call.method]?.write === true) return undefined;
    // A call verified one by one (SPEC §18, the forwarder's `verifyMode`) never joins an upstream batch.
    if (!input.eligible(call) || forwarder.verifyMode?.(input.network, call.method).alone === true) continue;
    indexes.push(i);
    calls.push(call);
  }
  if (indexes.length < 2) return undefined;
  const ids = indexes.length === elements.length ? (input.plainIds ?? plainIds(calls)) || undefined : undefined;
  const request: BatchRequest = {
    network: input.network,
    pools: input.pools,
    calls,
    signal: input.signal,
    trace: input.trace,
    asIs: ids === undefined ? undefined : { body: input.body, ids },
  };
  const pending = forwardBatch.call(forwarder, request);
  if (indexes.length === elements.length) return pending;
  return pending.then(({ outcomes }) => {
    const all: BatchOutcome[] = elements.map(() => undefined);
    indexes.forEach((index, k) => {
      all[index] = outcomes[k];
    });
    return { outcomes: all };
  });
}

/**
 * The calls' raw id texts when every one is plain (plain-id.ts) and unique; else undefined. The client's
 * batch can then go upstream as it is and be matched back by them.
 */
export function plainIds(calls: readonly RpcCall[]): string[] | undefined {
  const ids = new PlainIds();
  for (const call of calls) {
    const bytes = call.idBytes;
    if (call.id === undefined) return undefined;
    ids.add(bytes, bytes.toString('latin1'), 0, bytes.length);
    if (ids.texts === false) return undefined;
  }
  return ids.texts || undefined;
}
