/**
 * The port between JSON-RPC handling (handler.ts) and whatever answers calls upstream: the `Forwarder`
 * and its request and reply types. upstream/ implements it (origin-forwarder.ts, cache/), gateway.ts
 * wires an implementation in, and rpc/ never imports upstream/.
 */
import type { Readable } from 'node:stream';
import type { MemberSpan } from './json-scan.js';
import type { RpcCall } from './request.js';
import type { RequestTrace } from './request-trace.js';

/**
 * The waiting client as forwarding sees it: whether it went away, and 'abort' listeners — the part of
 * AbortSignal that forwarding uses, so an AbortSignal satisfies it (tests, embedders), and so does the
 * listener's own GoneSignal (http1), without either side importing the other.
 */
export interface ClientSignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** `networks.{name}.verify` (or the method's): how much of an answer is proven (SPEC §18). */
export type VerifyMode = 'off' | 'integrity' | 'proofs';

/** What was proven of one answer (`X-Switchyard-Verified`): every value, hashes and roots, or nothing. */
export type VerifyLevel = 'proof' | 'integrity' | 'none';

export interface UpstreamRequest {
  readonly network: string;
  /** The network's pools, in failover order. */
  readonly pools: readonly string[];
  readonly call: RpcCall;
  /** Aborts the attempts (the client went away). */
  readonly signal?: ClientSignal | undefined;
  /** The caller can pass a large answer on while it arrives (`rest`); others always get whole bodies. */
  readonly stream?: boolean;
  /** Who asked (gateway API key, else remote address): streams count against its stream slots. */
  readonly client?: string | undefined;
  /**
   * The client request this call belongs to: its id goes to origins as `X-Request-Id`, its logger
   * carries the id, and it learns the origins tried. None for calls the gateway makes itself.
   */
  readonly trace?: RequestTrace | undefined;
  /** Set for writes only: who sent it, for the transaction ledger (upstream/accepted-sends.ts). */
  readonly sender?: Sender | undefined;
}

/** The sender of a write: the gateway key it presented (its id), and its address. */
export interface Sender {
  readonly keyId: string | undefined;
  readonly address: string;
}

export interface UpstreamReply {
  /** The origin's response body, unchanged (empty for a notification). */
  readonly body: Buffer;
  /** Span of the id inside `body` (absent for a notification). */
  readonly id: { start: number; end: number } | undefined;
  readonly pool: string;
  readonly origin: string;
  /** Only when the request allowed streaming: the rest of the body, after `body`, still arriving. */
  readonly rest?: Readable;
  /** The whole body's length as the origin announced it (with `rest`), when it did. */
  readonly length?: number;
  /** The answer's `result` or `error` member and where it is in `body` (whole answers only). */
  readonly outcome?: MemberSpan;
  /** What verification proved of it (upstream/verified/); absent: not verified. */
  readonly verified?: VerifyLevel;
  /**
   * An accepted transaction send (eth_sendRawTransaction answered with its hash): the origins that
   * accepted it, as "pool/origin", once every origin it went to has answered (`send_transactions: all`
   * answers at the first acceptance, before the others). Absent on every other answer.
   */
  readonly acceptedBy?: Promise<readonly string[]>;
}

/** Calls of one client batch to send upstream as one batch (OriginForwarder.forwardBatch). */
export interface BatchRequest {
  readonly network: string;
  readonly pools: readonly string[];
  readonly calls: readonly RpcCall[];
  readonly signal?: ClientSignal | undefined;
  /** The client request the batch belongs to (UpstreamRequest.trace). */
  readonly trace?: RequestTrace | undefined;
  /**
   * Set when `calls` are every element of the client's batch, in order, each with a plain id (a short
   * decimal integer or a short string without escapes) unique in the batch: the client's body may then
   * go upstream as it is, matched back by the client's own ids (`ids`, their raw text), instead of a
   * copy with an id of ours in each element. A forwarder that sends only some of the calls drops it.
   */
  readonly asIs?: { readonly body: Buffer; readonly ids: readonly string[] } | undefined;
}

/**
 * Per call of a BatchRequest: the answer, the error the whole upstream batch failed with, `sent` (a
 * notification inside a batch an origin took), or undefined — not answered (missing from the origin's
 * array, or no origin took the batch): forward it on its own.
 */
export type BatchOutcome = { reply: UpstreamReply } | { error: unknown } | { sent: true } | undefined;

/** What forwardBatch gives back: one outcome per call, and maybe the client's whole answer. */
export interface BatchResult {
  readonly outcomes: BatchOutcome[];
  /**
   * The origin's body, when it is the client's whole answer as it stands: the request went `asIs` and
   * the origin's array answers every call once, in order, each answer passing the chain checks.
   */
  readonly whole?: Buffer | undefined;
  /**
   * With `whole`: whether the call at `index` was answered with a `result` (not an `error`), read without
   * making `outcomes` (an object and a reply per call that a whole answer otherwise never needs).
   */
  resultAt?(index: number): boolean;
}

export interface Forwarder {
  forward(request: UpstreamRequest): Promise<UpstreamReply>;
  /**
   * When present: the answer if it is at hand without any I/O (a response cache hit), else undefined
   * (then `forward`). Lets the handler answer a hit synchronously: no promise, no microtask per layer.
   * Throws like `forward` would reject (e.g. NO_HEALTHY_ORIGIN).
   */
  cached?(request: UpstreamRequest): UpstreamReply | undefined;
  /** When present, the handler sends a batch's read-only calls through it as one upstream batch. */
  forwardBatch?(request: BatchRequest): Promise<BatchResult>;
  /** Throws NO_HEALTHY_ORIGIN when no pool of the network could take a call now (router.ts). */
  assertRoutable?(network: string, pools: readonly string[]): void;
  /**
   * The verification mode of `method` on `network` (SPEC §18), and whether such a call is verified one by
   * one (its method has a check: it never joins an upstream batch). Absent: `off`.
   */
  verifyMode?(network: string, method: string): { readonly mode: VerifyMode; readonly alone: boolean };
}
