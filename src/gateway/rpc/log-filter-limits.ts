/**
 * How large one log filter may be (SPEC §20), the same for `eth_subscribe("logs")`, `eth_newFilter` and
 * `eth_getLogs`, over HTTP and WebSocket: at most `gateway.websocket.max_filter_addresses` (1000) entries
 * in `address`, at most 4 `topics` positions, and at most `gateway.websocket.max_filter_topics` (100)
 * values in one position. A larger filter is RPC_INVALID_PARAMS (-32602) naming the limit, checked
 * before anything else reads the lists, so a huge filter costs neither parsing nor an origin's work.
 * Lists are counted as sent (repeats count).
 */
import type { Config } from '../../config/schema.js';
import { SwitchyardError } from '../../errors/base.js';

/** The standard's topic positions (LOG0..LOG4 give at most 4 topics). */
export const MAX_TOPIC_POSITIONS = 4;

export type LogFilterLimits = Pick<Config['gateway']['websocket'], 'max_filter_addresses' | 'max_filter_topics'>;

/**
 * What makes this filter object too large, as a sentence naming the limit; undefined when it fits.
 * Shapes are not judged here (the callers' own checks do that).
 */
export function filterSizeProblem(
  filter: Readonly<Record<string, unknown>>,
  limits: LogFilterLimits,
): string | undefined {
  const { address, topics } = filter;
  if (Array.isArray(address) && address.length > limits.max_filter_addresses) {
    return `"address" lists ${address.length} addresses; at most ${limits.max_filter_addresses} are allowed (gateway.websocket.max_filter_addresses).`;
  }
  if (!Array.isArray(topics)) return undefined;
  if (topics.length > MAX_TOPIC_POSITIONS) {
    return `"topics" has ${topics.length} positions; at most ${MAX_TOPIC_POSITIONS} are allowed.`;
  }
  for (const [index, position] of topics.entries()) {
    if (Array.isArray(position) && position.length > limits.max_filter_topics) {
      return `"topics" position ${index} lists ${position.length} values; at most ${limits.max_filter_topics} per position are allowed (gateway.websocket.max_filter_topics).`;
    }
  }
  return undefined;
}

/** The -32602 refusal of a filter over the limits, for `method`; undefined when it fits. */
export function filterTooLarge(
  method: string,
  filter: Readonly<Record<string, unknown>>,
  limits: LogFilterLimits,
): SwitchyardError | undefined {
  const problem = filterSizeProblem(filter, limits);
  if (problem === undefined) return undefined;
  return new SwitchyardError(
    'RPC_INVALID_PARAMS',
    `Invalid params for ${method}: the log filter is too large: ${problem}`,
    {
      details: { method },
    },
  );
}
