/**
 * eth_getLogs over wide ranges (SPEC §17): `networks.{name}.logs_split: {chunk, concurrency}` (default
 * off; given, chunk 2 000 blocks and 4 at once). The hook claims an eth_getLogs whose filter has a block
 * range it can resolve: `fromBlock`/`toBlock` block numbers, `earliest` (0), `latest` or left out (the
 * network head as the chain tracker adopted it). Never claimed, so forwarded as they are: a `blockHash`
 * filter, a `pending`, `safe` or `finalized` bound (those tags mean something else than the head), a
 * reversed range, and any range while the head is unknown and a bound needs it.
 *
 *   - A range of at most `chunk` blocks goes out as the client's own call (streamed when large, as any
 *     answer); only if an origin refuses it for size (model/logs-refusals.ts) is it split, in halves.
 *   - A wider range is asked in chunks of `chunk` blocks (logs-chunks.ts: each chunk through the engine,
 *     `concurrency` at once, a refused chunk halved down to one block) and merged in block order
 *     (logs-merge.ts): the same bytes one origin would give for the whole range, streamed when large.
 * The range guard (rpc/logs-range.ts) still bounds the whole request first: `max_logs_block_range`
 * defaults to 1 000 000 blocks on a network with `logs_split` (config/schema.ts).
 */
import { logsRefusal } from '../../../model/logs-refusals.js';
import type { UpstreamReply, UpstreamRequest } from '../../rpc/forwarder.js';
import { errorOf } from '../answer-checks.js';
import { type BlockRange, chunksOf, halves, SplitQuery } from './logs-chunks.js';
import { mergedAnswer } from './logs-merge.js';
import type { HookUpstream, MethodHook } from './method-hook.js';

/** A block number as hex, at most 13 digits (52 bits: exact as a JS number). */
const QUANTITY = /^0x[0-9a-fA-F]{1,13}$/;

/** A claimed call's filter and the block range it resolves to. */
interface SplitFilter {
  readonly filter: Readonly<Record<string, unknown>>;
  readonly range: BlockRange;
}

export class LogsSplitHook implements MethodHook {
  readonly #upstream: HookUpstream;

  constructor(upstream: HookUpstream) {
    this.#upstream = upstream;
  }

  claims(request: Pick<UpstreamRequest, 'network' | 'call'>): boolean {
    if (this.#upstream.settings(request.network)?.logs_split === undefined) return false;
    return this.#resolve(request) !== undefined;
  }

  async forward(request: UpstreamRequest): Promise<UpstreamReply> {
    const split = this.#upstream.settings(request.network)?.logs_split;
    const resolved = split === undefined ? undefined : this.#resolve(request);
    if (split === undefined || resolved === undefined) return (await this.#upstream.call(request)).reply;
    const { filter, range } = resolved;
    if (range.to - range.from + 1 > split.chunk) {
      return this.#merged(request, filter, chunksOf(range, split.chunk), split.concurrency);
    }
    const answer = await this.#upstream.call(request);
    if (range.to === range.from || !refusedForSize(answer.reply)) return answer.reply;
    return this.#merged(request, filter, halves(range), split.concurrency);
  }

  #merged(
    request: UpstreamRequest,
    filter: Readonly<Record<string, unknown>>,
    ranges: readonly BlockRange[],
    concurrency: number,
  ): Promise<UpstreamReply> {
    const upstream = this.#upstream;
    upstream.logger.debug('eth_getLogs split', { network: request.network, chunks: ranges.length });
    const query = new SplitQuery(upstream, request, { filter, ranges, concurrency }, refusedForSize);
    return mergedAnswer(query, {
      stream: request.stream === true && request.call.id !== undefined,
      streamAfter: upstream.streamAfter,
      slots: upstream.streamSlots,
      client: request.client ?? '',
    });
  }

  /** The filter and its range, when the hook may split it (see the header). */
  #resolve(request: Pick<UpstreamRequest, 'network' | 'call'>): SplitFilter | undefined {
    const params = request.call.params;
    const filter = Array.isArray(params) ? (params[0] as unknown) : undefined;
    if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return undefined;
    const { fromBlock, toBlock, blockHash } = filter as Record<string, unknown>;
    if (blockHash !== undefined) return undefined;
    const head = () => this.#upstream.networkHead(request.network);
    const from = bound(fromBlock, head);
    const to = bound(toBlock, head);
    if (from === undefined || to === undefined || from > to) return undefined;
    return { filter: filter as Record<string, unknown>, range: { from, to } };
  }
}

/** A filter bound as a block number: a number, `earliest`, or `latest`/absent (the head); else undefined. */
function bound(value: unknown, head: () => number | undefined): number | undefined {
  if (value === undefined || value === 'latest') return head();
  if (value === 'earliest') return 0;
  if (typeof value === 'string' && QUANTITY.test(value)) return Number.parseInt(value.slice(2), 16);
  return undefined;
}

/** An origin's error answer refusing the range for its size (model/logs-refusals.ts). */
function refusedForSize(reply: UpstreamReply): boolean {
  const outcome = reply.outcome;
  if (outcome?.key !== 'error') return false;
  return logsRefusal(errorOf(reply.body, outcome.value.start, outcome.value.end)) !== undefined;
}
