/**
 * Whether an origin's answer to a send accepted the transaction (eth-send-raw-transaction.ts): a
 * `result` did; an error from model/known-transaction-answers.ts ("already known", "nonce too low", …)
 * did when the origin has this very transaction — the message names its hash, or that origin answers
 * eth_getTransactionByHash (one attempt on it alone, through the engine, never the client's signal:
 * the send's outcome is settled either way) with a transaction of that hash. An accepted error answer
 * becomes `{"jsonrpc":"2.0","id":…,"result":"0x<hash>"}` with the origin's id, so the client's is
 * spliced in as for any answer. Anything else (a refusal, an answer still streaming) is not accepted.
 */
import { knownTransactionAnswer } from '../../../model/known-transaction-answers.js';
import type { Candidate } from '../../../routing/router.js';
import type { UpstreamReply, UpstreamRequest } from '../../rpc/forwarder.js';
import { ownCall } from '../../rpc/request.js';
import { errorOf } from '../answer-checks.js';
import type { CalledAnswer, HookUpstream } from './method-hook.js';

const HEAD = Buffer.from('{"jsonrpc":"2.0","id":');
const ONE = Buffer.from('1');
/** `,"result":` before the hash. */
const RESULT_AT = 10;

/** The accepted answer (the reply itself, or the hash answer for a known transaction), else undefined. */
export async function acceptedAnswer(
  upstream: HookUpstream,
  request: UpstreamRequest,
  hash: string,
  answer: CalledAnswer,
): Promise<UpstreamReply | undefined> {
  const { reply, candidate } = answer;
  const outcome = reply.outcome;
  if (outcome?.key === 'result') return reply;
  if (outcome?.key !== 'error') return undefined;
  const known = knownTransactionAnswer(errorOf(reply.body, outcome.value.start, outcome.value.end));
  if (known === undefined) return undefined;
  const has = known.hash === undefined ? await originHas(upstream, request, candidate, hash) : known.hash === hash;
  if (!has) return undefined;
  upstream.logger.debug('origin already had the transaction: answered as accepted', {
    network: request.network,
    pool: candidate.pool.name,
    origin: candidate.origin.name,
    answer: known.row.message,
  });
  const id = reply.id === undefined ? undefined : reply.body.subarray(reply.id.start, reply.id.end);
  return hashAnswer(hash, id, reply.pool, reply.origin);
}

/** `{"jsonrpc":"2.0","id":<id>,"result":"<hash>"}` as a reply (id 1 when none is given). */
export function hashAnswer(hash: string, id: Buffer | undefined, pool: string, origin: string): UpstreamReply {
  const idBytes = id ?? ONE;
  const body = Buffer.concat([HEAD, idBytes, Buffer.from(`,"result":"${hash}"}`)]);
  const start = HEAD.length + idBytes.length + RESULT_AT;
  return {
    body,
    id: { start: HEAD.length, end: HEAD.length + idBytes.length },
    pool,
    origin,
    outcome: { key: 'result', value: { kind: 'string', start, end: start + hash.length + 2 } },
  };
}

/** Whether `candidate` answers eth_getTransactionByHash(hash) with that transaction. */
async function originHas(
  upstream: HookUpstream,
  request: UpstreamRequest,
  candidate: Candidate,
  hash: string,
): Promise<boolean> {
  const { network, pools, client, trace } = request;
  let reply: UpstreamReply;
  try {
    const call = ownCall('eth_getTransactionByHash', [hash]);
    reply = (await upstream.callOn({ network, pools, client, trace, call }, candidate)).reply;
  } catch {
    return false;
  }
  const outcome = reply.outcome;
  if (outcome?.key !== 'result' || outcome.value.kind !== 'object') return false;
  try {
    const found = JSON.parse(reply.body.toString('utf8', outcome.value.start, outcome.value.end)) as { hash?: unknown };
    return typeof found.hash === 'string' && found.hash.toLowerCase() === hash;
  } catch {
    return false;
  }
}
