/**
 * `eth_subscribe` params (SPEC §10) read into what the hub subscribes to, and the key under which one
 * upstream source is shared: (network, kind, normalised filter).
 *
 * Accepted, as geth names them:
 *   ["newHeads"]
 *   ["logs"] or ["logs", { address?, topics? }]   (`fromBlock`/`toBlock` only as "latest": a subscription
 *                                                  follows new blocks; `blockHash` is refused)
 *   ["newPendingTransactions"] or [..., false]     (hashes; `true`, full transactions, is refused)
 * Anything else is RPC_INVALID_PARAMS (-32602) with a message saying what to send; so is a logs filter
 * over the size limits (rpc/log-filter-limits.ts), checked before its lists are read.
 *
 * Normalisation (two filters that match the same logs share one source):
 *   - addresses: 20-byte hex, lowercase, sorted, duplicates dropped; one string = a list of one; an
 *     empty list = any address;
 *   - topics: at most 4 positions; per position null (any), a 32-byte hex, or a list of them (lowercase,
 *     sorted, duplicates dropped); a list that is empty or holds a null matches anything, i.e. null;
 *     trailing nulls are dropped (they match anything).
 */
import { SwitchyardError } from '../../errors/base.js';
import { filterTooLarge, type LogFilterLimits, MAX_TOPIC_POSITIONS } from '../rpc/log-filter-limits.js';

export type SubscriptionKind = 'newHeads' | 'logs' | 'newPendingTransactions';

export interface LogFilter {
  /** Lowercase, sorted, unique; empty = any address. */
  readonly address: readonly string[];
  /** Per position: null = any, else lowercase sorted unique topics; no trailing null. */
  readonly topics: ReadonlyArray<readonly string[] | null>;
}

export type SubscriptionRequest =
  | { readonly kind: 'newHeads' }
  | { readonly kind: 'logs'; readonly filter: LogFilter }
  | { readonly kind: 'newPendingTransactions' };

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const TOPIC = /^0x[0-9a-fA-F]{64}$/;
const SHAPES =
  'eth_subscribe params are ["newHeads"], ["logs", {"address": …, "topics": […]}] or ["newPendingTransactions"]';

function invalid(reason: string): SwitchyardError {
  return new SwitchyardError('RPC_INVALID_PARAMS', `Invalid params: ${reason}. ${SHAPES}.`);
}

/** Reads eth_subscribe params; with `limits`, a logs filter over them is refused (log-filter-limits.ts). */
export function parseSubscribeParams(params: unknown, limits?: LogFilterLimits): SubscriptionRequest {
  if (!Array.isArray(params) || params.length === 0 || typeof params[0] !== 'string') {
    throw invalid('the first param must be the subscription name');
  }
  const [name, ...rest] = params as [string, ...unknown[]];
  switch (name) {
    case 'newHeads':
      if (rest.length > 0) throw invalid('newHeads takes no further params');
      return { kind: 'newHeads' };
    case 'newPendingTransactions':
      if (rest.length > 1 || (rest.length === 1 && rest[0] !== false && rest[0] !== null)) {
        throw invalid('newPendingTransactions sends transaction hashes; full transactions (true) are not offered');
      }
      return { kind: 'newPendingTransactions' };
    case 'logs':
      if (rest.length > 1) throw invalid('logs takes one filter object');
      return { kind: 'logs', filter: parseLogFilter(rest[0], limits) };
    default:
      throw invalid(`no "${name}" subscription`);
  }
}

function parseLogFilter(value: unknown, limits: LogFilterLimits | undefined): LogFilter {
  if (value === undefined || value === null) return { address: [], topics: [] };
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('the logs filter must be an object');
  const filter = value as Record<string, unknown>;
  const tooLarge = limits === undefined ? undefined : filterTooLarge('eth_subscribe', filter, limits);
  if (tooLarge !== undefined) throw tooLarge;
  for (const [key, member] of Object.entries(filter)) {
    if (key === 'address' || key === 'topics') continue;
    if ((key === 'fromBlock' || key === 'toBlock') && (member === 'latest' || member === null)) continue;
    if (key === 'fromBlock' || key === 'toBlock' || key === 'blockHash') {
      throw invalid(
        `a logs subscription follows new blocks: "${key}" is not accepted (use eth_getLogs for past blocks)`,
      );
    }
    throw invalid(`unknown logs filter member "${key}"`);
  }
  return { address: parseAddresses(filter.address), topics: parseTopics(filter.topics) };
}

function parseAddresses(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  for (const address of list) {
    if (typeof address !== 'string' || !ADDRESS.test(address)) {
      throw invalid('"address" must be a 20-byte hex address or a list of them');
    }
  }
  return sortedUnique(list as string[]);
}

function parseTopics(value: unknown): Array<string[] | null> {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid('"topics" must be a list of positions');
  if (value.length > MAX_TOPIC_POSITIONS) throw invalid(`"topics" has at most ${MAX_TOPIC_POSITIONS} positions`);
  const positions = value.map((position): string[] | null => {
    if (position === null) return null;
    const list = Array.isArray(position) ? position : [position];
    if (list.length === 0 || list.includes(null)) return null;
    for (const topic of list) {
      if (typeof topic !== 'string' || !TOPIC.test(topic)) {
        throw invalid('each topics position must be null, a 32-byte hex topic or a list of them');
      }
    }
    return sortedUnique(list as string[]);
  });
  while (positions.length > 0 && positions[positions.length - 1] === null) positions.pop();
  return positions;
}

function sortedUnique(values: readonly string[]): string[] {
  return [...new Set(values.map((value) => value.toLowerCase()))].sort();
}

/** The key of the one upstream source a request shares with every equal request of the network. */
export function sourceKey(network: string, request: SubscriptionRequest): string {
  return request.kind === 'logs'
    ? `${network}\u0000logs\u0000${JSON.stringify(request.filter)}`
    : `${network}\u0000${request.kind}`;
}
