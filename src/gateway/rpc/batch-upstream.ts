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
import type { Element, RpcCall } from './request.js';

export interface UpstreamBatchInput {
  readonly network: string;
  readonly pools: readonly string[];
  readonly elements: readonly Element[];
  /** The client's batch as it arrived. */
  readonly body: Buffer;
  readonly signal: ClientSignal | undefined;
  /** Whether a valid call may join the upstream batch. */
  readonly eligible: (call: RpcCall) => boolean;
}

/** The upstream batch's result per element, or undefined when the batch goes call by call. */
export function upstreamBatch(forwarder: Forwarder, input: UpstreamBatchInput): Promise<BatchResult> | undefined {
  const forwardBatch = forwarder.forwardBatch;
  if (forwardBatch === undefined) return undefined;
  const { elements } = input;
  const indexes: number[] = [];
  for (let i = 0; i < elements.length; i += 1) {
    const element = elements[i] as Element;
    if (!element.ok) continue;
    if (STANDARD_METHODS[element.call.method]?.write === true) return undefined;
    if (input.eligible(element.call)) indexes.push(i);
  }
  if (indexes.length < 2) return undefined;
  const calls = indexes.map((i) => (elements[i] as { ok: true; call: RpcCall }).call);
  const ids = indexes.length === elements.length ? plainIds(calls) : undefined;
  const request: BatchRequest = {
    network: input.network,
    pools: input.pools,
    calls,
    signal: input.signal,
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

/** Longest id text that may go upstream as the client wrote it (BatchRequest.asIs). */
const MAX_PLAIN_ID = 64;

/**
 * The calls' raw id texts when every one is plain — a decimal integer without sign, fraction or leading
 * zero (at most 15 digits, which every JSON parser keeps exact), or a string without escapes, at most
 * MAX_PLAIN_ID bytes — and unique; else undefined. Origins echo such ids byte for byte, so the client's
 * batch can go upstream as it is and be matched back by them.
 */
export function plainIds(calls: readonly RpcCall[]): string[] | undefined {
  const ids: string[] = [];
  const seen = new Set<string>();
  for (const call of calls) {
    const bytes = call.idBytes;
    if (call.id === undefined || bytes.length > MAX_PLAIN_ID || !plainId(bytes)) return undefined;
    const text = bytes.toString('latin1');
    if (seen.has(text)) return undefined;
    seen.add(text);
    ids.push(text);
  }
  return ids;
}

function plainId(bytes: Buffer): boolean {
  const first = bytes[0];
  if (first === 0x22) {
    for (let i = 1; i < bytes.length - 1; i += 1) if (bytes[i] === 0x5c) return false;
    return true;
  }
  if (bytes.length > 15 || (first === 0x30 && bytes.length > 1)) return false;
  for (let i = 0; i < bytes.length; i += 1) {
    const c = bytes[i] as number;
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}
