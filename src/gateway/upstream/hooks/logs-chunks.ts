/**
 * One split eth_getLogs under way (eth-get-logs.ts): its block ranges asked as eth_getLogs calls of
 * their own through the failsafe engine (`HookUpstream.call`: each chunk planned, routed, failed over,
 * throttled and scored like any read, so the chunks spread over the network's origins), at most
 * `concurrency` requests at once and at most `concurrency` ranges ahead of the piece the caller takes
 * next, so a slow reader holds back the fetching (and the memory). `next()` gives the pieces in block
 * order.
 *
 * A range an origin refuses for size (model/logs-refusals.ts: "query returned more than 10000 results",
 * "exceed maximum block range", …) is halved and both halves asked, down to one block; a one-block
 * refusal, and any other answer that is not a log array (an error), is a piece of kind `answer`: it
 * ends the query and passes to the client as the answer a single origin gave. A chunk the engine could
 * not get answered at all is `failed` with the engine's error.
 *
 * Each chunk call carries the query's own signal: `stop()` (the answer is settled, failed, or the
 * client left — the client's signal is forwarded to it) ends every chunk call still in flight.
 */
import type { UpstreamReply, UpstreamRequest } from '../../rpc/forwarder.js';
import type { ValueSpan } from '../../rpc/json-scan.js';
import { ownCall } from '../../rpc/request.js';
import type { HookUpstream } from './method-hook.js';

export interface BlockRange {
  readonly from: number;
  readonly to: number;
}

export type Piece =
  /** A log array: its elements' bytes without the brackets (empty when it held none). */
  | { readonly kind: 'logs'; readonly reply: UpstreamReply; readonly elements: Buffer }
  /** Any other answer (an error): it is the client's answer. */
  | { readonly kind: 'answer'; readonly reply: UpstreamReply }
  /** No origin answered the chunk (the engine's error). */
  | { readonly kind: 'failed'; readonly error: unknown };

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const COMMA = Buffer.from(',');

export class SplitQuery {
  readonly #upstream: HookUpstream;
  readonly #request: UpstreamRequest;
  readonly #filter: Readonly<Record<string, unknown>>;
  readonly #ranges: readonly BlockRange[];
  readonly #concurrency: number;
  readonly #refused: (reply: UpstreamReply) => boolean;
  readonly #abort = new AbortController();
  /** Pieces started, by range index; a taken one is cleared. */
  readonly #started: Array<Promise<Piece> | undefined> = [];
  readonly #waiting: Array<() => void> = [];
  #taken = 0;
  #inFlight = 0;

  constructor(
    upstream: HookUpstream,
    request: UpstreamRequest,
    query: { filter: Readonly<Record<string, unknown>>; ranges: readonly BlockRange[]; concurrency: number },
    refused: (reply: UpstreamReply) => boolean,
  ) {
    this.#upstream = upstream;
    this.#request = request;
    this.#filter = query.filter;
    this.#ranges = query.ranges;
    this.#concurrency = query.concurrency;
    this.#refused = refused;
    const signal = request.signal;
    if (signal?.aborted) this.stop();
    else signal?.addEventListener('abort', this.#onClientAbort, { once: true });
  }

  /** Whether pieces are left to take. */
  get remaining(): boolean {
    return this.#taken < this.#ranges.length;
  }

  /** The next piece in block order, or undefined when every one was taken. */
  async next(): Promise<Piece | undefined> {
    if (this.#taken >= this.#ranges.length) return undefined;
    while (this.#started.length < this.#ranges.length && this.#started.length < this.#taken + this.#concurrency) {
      this.#started.push(this.#fetch(this.#ranges[this.#started.length] as BlockRange));
    }
    const piece = await (this.#started[this.#taken] as Promise<Piece>);
    this.#started[this.#taken] = undefined;
    this.#taken += 1;
    return piece;
  }

  /** Ends the chunk calls in flight and starts no more. */
  stop(): void {
    this.#request.signal?.removeEventListener('abort', this.#onClientAbort);
    this.#abort.abort(new Error('the split eth_getLogs ended'));
  }

  readonly #onClientAbort = (): void => {
    this.stop();
  };

  /** One range's piece (never rejects). */
  async #fetch(range: BlockRange): Promise<Piece> {
    try {
      await this.#slot();
      let reply: UpstreamReply;
      try {
        if (this.#abort.signal.aborted) throw this.#abort.signal.reason;
        reply = (await this.#upstream.call(this.#chunkRequest(range))).reply;
      } finally {
        this.#release();
      }
      return await this.#piece(range, reply);
    } catch (error) {
      return { kind: 'failed', error };
    }
  }

  async #piece(range: BlockRange, reply: UpstreamReply): Promise<Piece> {
    const outcome = reply.outcome;
    if (outcome?.key === 'result' && outcome.value.kind === 'array') {
      return { kind: 'logs', reply, elements: arrayElements(reply.body, outcome.value) };
    }
    if (range.to > range.from && this.#refused(reply)) {
      const [low, high] = halves(range);
      const [first, second] = await Promise.all([this.#fetch(low), this.#fetch(high)]);
      return joined(first, second);
    }
    return { kind: 'answer', reply };
  }

  #chunkRequest(range: BlockRange): UpstreamRequest {
    const filter = { ...this.#filter, fromBlock: hex(range.from), toBlock: hex(range.to) };
    // The client's request (its id to the origins, its log lines, the origins tried) goes with each chunk.
    const { network, pools, client, trace } = this.#request;
    return { network, pools, client, trace, call: ownCall('eth_getLogs', [filter]), signal: this.#abort.signal };
  }

  /** Waits for one of the `concurrency` request slots. */
  #slot(): Promise<void> {
    if (this.#inFlight < this.#concurrency) {
      this.#inFlight += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Gives a slot back: to the oldest waiter, if any. */
  #release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else this.#inFlight -= 1;
  }
}

/** `range` in chunks of `size` blocks, in order (the last one may be shorter). */
export function chunksOf(range: BlockRange, size: number): BlockRange[] {
  const chunks: BlockRange[] = [];
  for (let from = range.from; from <= range.to; from += size) {
    chunks.push({ from, to: Math.min(range.to, from + size - 1) });
  }
  return chunks;
}

/** A range of two blocks or more in two halves (the lower one takes the odd block). */
export function halves(range: BlockRange): [BlockRange, BlockRange] {
  const middle = range.from + Math.floor((range.to - range.from) / 2);
  return [
    { from: range.from, to: middle },
    { from: middle + 1, to: range.to },
  ];
}

/** The two halves' pieces as one: their logs in order, or the first that is not logs. */
function joined(first: Piece, second: Piece): Piece {
  if (first.kind !== 'logs') return first;
  if (second.kind !== 'logs') return second;
  return { kind: 'logs', reply: first.reply, elements: joinElements([first.elements, second.elements]) };
}

/** Log elements' bytes joined with commas, the empty ones left out. */
export function joinElements(parts: readonly Buffer[]): Buffer {
  const present = parts.filter((part) => part.length > 0);
  if (present.length <= 1) return present[0] ?? Buffer.alloc(0);
  const pieces: Buffer[] = [];
  for (const part of present) {
    if (pieces.length > 0) pieces.push(COMMA);
    pieces.push(part);
  }
  return Buffer.concat(pieces);
}

/** The bytes between an array's brackets, without the space next to them. */
function arrayElements(body: Buffer, span: ValueSpan): Buffer {
  let start = span.start + 1;
  let end = span.end - 1;
  while (start < end && SPACE.has(body[start] as number)) start += 1;
  while (end > start && SPACE.has(body[end - 1] as number)) end -= 1;
  return body.subarray(start, end);
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}
