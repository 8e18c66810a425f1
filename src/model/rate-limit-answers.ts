/**
 * Providers' rate-limit answers (SPEC §17): the JSON-RPC errors that mean "this origin is throttling you",
 * as one table. Every row is matched on its message (a case-insensitive substring), and on the code too
 * where the provider documents one — never on a code alone: -32005 also means "query returned more than
 * 10000 results" (geth's eth_getLogs limit), and a contract may revert with any text, so an error whose
 * code is 3 or whose message starts "execution reverted" is never a rate-limit answer.
 * An HTTP 429 (every provider: Infura, Alchemy, QuickNode, Chainstack, Ankr, …) is throttling whatever
 * its body says; that rule lives with the status checks (gateway/upstream/attempt.ts). Sources of each
 * row: docs/routing.md "The provider table". Read by the gateway (a throttled answer sends the call on
 * and benches the origin) and by the health monitor (a probe answered this way counts neither up nor down).
 */

export interface RateLimitAnswer {
  readonly provider: string;
  /** Lower-case text the message contains. */
  readonly message: string;
  /** The JSON-RPC codes the provider uses with it; absent: the message alone decides. */
  readonly codes?: readonly number[];
}

export const RATE_LIMIT_ANSWERS: readonly RateLimitAnswer[] = [
  // docs.infura.io/api/networks/ethereum/how-to/avoid-rate-limiting
  { provider: 'Infura', message: 'daily request count exceeded', codes: [-32005] },
  { provider: 'Infura', message: 'project id request rate exceeded', codes: [-32005] },
  // alchemy.com/docs/reference/throughput (the WebSocket form; HTTP gets a 429)
  { provider: 'Alchemy', message: 'exceeded its compute units per second capacity', codes: [429] },
  // quicknode.com/docs/*/error-references ("HTTP Error Code Example")
  { provider: 'QuickNode', message: 'of your requests are higher than your plan allows', codes: [429] },
  // support.quicknode.com "Error: credits limited to X/sec"
  { provider: 'QuickNode', message: 'credits limited to' },
  // docs.wetez.io/wetez/developer/apis/error; the wording most gateways use with code 429
  { provider: 'generic', message: 'too many requests', codes: [429, -32005] },
];

/** The table's row an origin's JSON-RPC error matches, if any. */
export function rateLimitAnswer(error: { code?: unknown; message?: unknown }): RateLimitAnswer | undefined {
  const { code, message } = error;
  if (typeof message !== 'string' || code === 3) return undefined;
  const text = message.toLowerCase();
  if (text.startsWith('execution reverted')) return undefined;
  for (const row of RATE_LIMIT_ANSWERS) {
    if (!text.includes(row.message)) continue;
    if (row.codes === undefined || (typeof code === 'number' && row.codes.includes(code))) return row;
  }
  return undefined;
}

/**
 * How long the answer asks to wait, in ms, when it says so (Infura's `data.backoff_seconds`); else
 * undefined (the caller's default applies).
 */
export function backoffOf(error: { data?: unknown }): number | undefined {
  const data = error.data as { backoff_seconds?: unknown } | null | undefined;
  const seconds = data !== null && typeof data === 'object' ? data.backoff_seconds : undefined;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}
