/**
 * One JSON body from an origin, outside client traffic (the chain tracker's requests, chain-source.ts, and
 * the ledger's, origin-calls.ts): the request goes over the given origin clients, bounded by `timeoutMs`
 * from dispatch to the whole answer. A failed exchange, an HTTP status that means failure (5xx,
 * 401/403/407/408/429) or a body that is not JSON rejects with an AttemptFailure, whose message names no
 * address. `replayable`: the request may be sent once more on a fresh connection after a stale
 * keep-alive socket (reads only). `rpcOutcome` reads one JSON-RPC response of such a body.
 */
import type { OriginCallAnswer } from '../../model/origin-calls.js';
import type { Origin } from '../../model/pool.js';
import { AttemptFailure, classify, FAILING_STATUS, THROTTLED_STATUS } from './attempt-failure.js';
import { exchange, type OriginClients } from './origin-clients.js';

export async function originJson(
  clients: OriginClients,
  origin: Origin,
  body: Buffer,
  timeoutMs: number,
  replayable: boolean,
): Promise<unknown> {
  let target: ReturnType<OriginClients['target']>;
  try {
    target = clients.target(origin);
  } catch (err) {
    throw new AttemptFailure('connect', 'unusable origin address', { cause: err });
  }
  const pending = exchange(target, body, timeoutMs, undefined, { replayable });
  let status: number;
  let bytes: Buffer;
  try {
    ({ status, body: bytes } = await pending.response);
  } catch (err) {
    throw classify(err, timeoutMs, pending.busy);
  }
  if (status >= 500 || status === THROTTLED_STATUS || FAILING_STATUS.has(status)) {
    throw new AttemptFailure('status', `HTTP ${status}`);
  }
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new AttemptFailure('garbled', 'the answer is not JSON');
  }
}

/** A JSON-RPC response's outcome: its `error` when set (not null), else its `result`; undefined when it has neither. */
export function rpcOutcome(fields: Readonly<Record<string, unknown>>): OriginCallAnswer | undefined {
  if (fields.error !== undefined && fields.error !== null) return { error: fields.error };
  return 'result' in fields ? { result: fields.result } : undefined;
}
