/**
 * What an origin's answer to a read says about the chain (SPEC §9), checked on the raw bytes the
 * forwarder already scanned (the `outcome` span of the answer; nothing is parsed twice):
 *   - a missing-data error (chain/missing-data.ts: pruned state or history, a block the origin does not
 *     have) → `missing`: the forwarder tries the next origin; for a call pinned to blocks, and unless the
 *     origin is simply behind them, the tracker learns that the origin lacks the first block;
 *   - `null` for a lookup by hash, or for a pinned block, from an origin behind the network head (or
 *     behind the block), or one whose head claim the tracker refused → `behind`: retried once on the
 *     most advanced origin;
 *   - a block or transaction by hash (eth_getBlockByHash, eth_getTransactionByHash) whose `hash`, or a
 *     receipt whose `transactionHash`, is not the hash asked for → `bad` (SPEC §20): the next origin is
 *     tried, as for missing data, and the answer reaches the client only if no origin answers better;
 *   - eth_blockNumber, and eth_getBlockByNumber("latest"), above the network's head ceiling (a head no
 *     adopted chain can have yet: chain/head-bound.ts), or above the network head from an origin whose
 *     head claim the tracker refused (SPEC §20: it counts as lagging) → `bad`; below the head already reported to
 *     clients of the network → `behind` (monotonic head); otherwise the number is reported (and the
 *     origin's head is at least that);
 *   - a receipt's blockNumber tells the tracker the origin has that block.
 * Answers still streaming (large ones) are never errors or nulls worth checking: they pass.
 */
import { missingData } from '../../chain/missing-data.js';
import type { CallNeeds, ChainFeedback, ChainView } from '../../chain/types.js';
import type { Candidate } from '../../routing/router.js';
import type { UpstreamReply } from '../rpc/forwarder.js';
import type { JsonKind } from '../rpc/json-lex.js';
import { scanJson, type ValueSpan } from '../rpc/json-scan.js';

export type Verdict = 'ok' | 'missing' | 'behind' | 'bad';

/** What a verdict other than `ok` means for the call, as the forwarder logs it. */
export const VERDICT_NOTES: Readonly<Record<Exclude<Verdict, 'ok'>, string>> = {
  missing: 'origin lacks the data; trying the next',
  behind: 'origin is behind',
  bad: 'origin answered other than asked; trying the next',
};

/** Error answers longer than this are not missing-data errors (those are one short message). */
const MAX_ERROR_BYTES = 4096;
const NUMBER_KEY = Buffer.from('"number":"');
const BLOCK_NUMBER_KEY = Buffer.from('"blockNumber":"');
/** Lookups by hash, and the member of their answer that must be the hash asked for. */
const HASH_MEMBER: Readonly<Record<string, string>> = {
  eth_getBlockByHash: 'hash',
  eth_getTransactionByHash: 'hash',
  eth_getTransactionReceipt: 'transactionHash',
};

export interface AnswerContext {
  readonly network: string;
  readonly method: string;
  readonly params: unknown;
  readonly needs: CallNeeds;
  readonly candidate: Candidate;
}

/** What judgeAnswer reads of a reply. */
export type JudgedReply = Pick<UpstreamReply, 'body' | 'outcome' | 'rest'>;

/**
 * Whether judgeAnswer can turn down, or learn anything from, an answer of this method with this outcome:
 * errors, nulls, and the methods whose results show a head or a block. Everything else is 'ok' at once
 * (batch answers are checked here first, without their span objects).
 */
export function worthJudging(method: string, outcomeKey: string, valueKind: JsonKind): boolean {
  return (
    outcomeKey === 'error' ||
    valueKind === 'null' ||
    method === 'eth_blockNumber' ||
    method === 'eth_getBlockByNumber' ||
    HASH_MEMBER[method] !== undefined
  );
}

export function judgeAnswer(chain: ChainView & ChainFeedback, context: AnswerContext, reply: JudgedReply): Verdict {
  const outcome = reply.outcome;
  if (outcome === undefined || reply.rest !== undefined) return 'ok';
  const { candidate, needs, network, method } = context;
  if (!worthJudging(method, outcome.key, outcome.value.kind)) return 'ok';
  const poolId = candidate.pool.id;
  const origin = candidate.origin.name;
  const value = outcome.value;
  if (outcome.key === 'error') {
    if (value.end - value.start > MAX_ERROR_BYTES) return 'ok';
    const match = missingData(errorOf(reply.body, value.start, value.end));
    if (match === undefined) return 'ok';
    if (needs.kind === 'block') {
      const head = chain.origin(poolId, origin)?.head;
      // Pruned state or history teaches the origin's earliest block. An unknown block teaches it only
      // below the origin's known head: above it, or with no head known, the origin may just be behind.
      const pruned = match.meaning !== 'unknown-block' || (head !== undefined && head >= needs.to);
      // Some clients name their earliest block ("available from block N"): exact, better than a guess.
      if (pruned) chain.lacksBlock(poolId, origin, (match.earliestAvailable ?? needs.from + 1) - 1);
    }
    return 'missing';
  }
  if (value.kind === 'null') {
    if (needs.kind !== 'hash' && needs.kind !== 'block') return 'ok';
    const state = chain.origin(poolId, origin);
    const head = state?.head;
    if (head === undefined || state?.refused === true) return 'behind';
    const wanted = needs.kind === 'block' ? needs.to : chain.networkHead(network);
    return wanted !== undefined && head < wanted ? 'behind' : 'ok';
  }
  if (HASH_MEMBER[method] !== undefined && !showsHashAsked(context, reply.body, value)) return 'bad';
  const head = headShown(context, reply.body, value);
  if (head !== undefined) return reportHead(chain, network, poolId, origin, head);
  if (method === 'eth_getTransactionReceipt' && value.kind === 'object') {
    const block = keyedQuantity(reply.body, BLOCK_NUMBER_KEY, value.start, value.end);
    if (block !== undefined) chain.sawHead(poolId, origin, block);
  }
  return 'ok';
}

/**
 * The head a client is about to see: `bad` above the head ceiling, `behind` when lower than one already
 * reported, else reported. The tracker hears it either way (it counts a number above the ceiling).
 */
function reportHead(
  chain: ChainView & ChainFeedback,
  network: string,
  poolId: string,
  origin: string,
  number: number,
): Verdict {
  chain.sawHead(poolId, origin, number);
  if (number > (chain.headCeiling(network) ?? Number.POSITIVE_INFINITY)) return 'bad';
  // An origin whose head claim the tracker refused counts as lagging: a head above the adopted one is its
  // word alone. Reported, it would raise the monotonic head to a block routing credits no origin with, and
  // the next answer from an honest origin would have to go back.
  if (number > (chain.networkHead(network) ?? -1) && chain.origin(poolId, origin)?.refused === true) return 'bad';
  const reported = chain.reportedHead(network);
  if (reported !== undefined && number < reported) return 'behind';
  chain.reported(network, number);
  return 'ok';
}

/** The head number in an answer that passes through after a `behind` retry (reported: it is the best we have). */
export function reportPassedHead(chain: ChainFeedback, context: AnswerContext, reply: UpstreamReply): void {
  const value = reply.outcome?.value;
  if (value === undefined || reply.outcome?.key !== 'result') return;
  const number = headShown(context, reply.body, value);
  if (number !== undefined) chain.reported(context.network, number);
}

/** The head a result shows a client: eth_blockNumber's number, or the number of the `latest` block. */
function headShown(context: AnswerContext, body: Buffer, value: ValueSpan): number | undefined {
  if (context.method === 'eth_blockNumber' && value.kind === 'string') {
    return quantity(body, value.start + 1, value.end - 1);
  }
  if (context.method === 'eth_getBlockByNumber' && value.kind === 'object' && isLatest(context.params)) {
    return keyedQuantity(body, NUMBER_KEY, value.start, value.end);
  }
  return undefined;
}

/** Whether a lookup by hash answered the object asked for: its hash member is the hash in the params. */
function showsHashAsked(context: AnswerContext, body: Buffer, value: ValueSpan): boolean {
  const asked = Array.isArray(context.params) ? context.params[0] : undefined;
  if (value.kind !== 'object' || typeof asked !== 'string') return true;
  const key = HASH_MEMBER[context.method] as string;
  const member = scanJson(body, value.start, value.end)?.members.find((m) => m.key === key)?.value;
  if (member?.kind !== 'string') return false;
  return body.toString('latin1', member.start + 1, member.end - 1).toLowerCase() === asked.toLowerCase();
}

function isLatest(params: unknown): boolean {
  return Array.isArray(params) && params[0] === 'latest';
}

/** The `code`, `message` and `data` of the JSON-RPC error object in body[start, end) (what is there of them). */
export function errorOf(body: Buffer, start: number, end: number): { code?: number; message?: string; data?: unknown } {
  try {
    const error = JSON.parse(body.toString('utf8', start, end)) as unknown;
    if (error === null || typeof error !== 'object') return {};
    const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
    return {
      ...(typeof code === 'number' ? { code } : {}),
      ...(typeof message === 'string' ? { message } : {}),
      ...(data === undefined ? {} : { data }),
    };
  } catch {
    return {};
  }
}

/** `0x…` between start and end (no quotes) as a number; undefined unless a plain hex quantity. */
function quantity(body: Buffer, start: number, end: number): number | undefined {
  if (end - start < 3 || end - start > 16 || body[start] !== 0x30 || body[start + 1] !== 0x78) return undefined;
  let n = 0;
  for (let i = start + 2; i < end; i += 1) {
    const c = body[i] as number;
    const digit =
      c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (digit < 0) return undefined;
    n = n * 16 + digit;
  }
  return n;
}

/**
 * The first `"key":"0x…"` inside [start, end) as a number. Used for a block's top-level `number` (full
 * transactions carry `blockNumber`, never `number`) and a receipt's `blockNumber` (its logs carry the same).
 */
function keyedQuantity(body: Buffer, key: Buffer, start: number, end: number): number | undefined {
  const at = body.indexOf(key, start);
  if (at < 0 || at >= end) return undefined;
  const from = at + key.length;
  const close = body.indexOf(0x22, from);
  if (close < 0 || close >= end) return undefined;
  return quantity(body, from, close);
}
