/**
 * `eth_call` and `eth_estimateGas` executed locally (SPEC §18 `proofs`): verify/ `executeCall` /
 * `estimateGas` in @ethereumjs/vm at the target block's proven header, over state read only through a
 * proof reader (verify/ `createProofReader`) whose calls go to the attempt's origin — eth_getProof per
 * account touched, eth_getCode per contract run, each proven; BLOCKHASH of older blocks from the anchor.
 * The origin's `eth_createAccessList` for the call, asked first, only says what to fetch at once (an
 * error or a malformed list is ignored: execution fetches what it touches anyway). The local result is
 * the answer (`proof`), its error answers included (a revert is the call's outcome, not a failure).
 *
 * Not provable here, so forwarded as before (`Unprovable`, answered `none`): a third parameter (state
 * or block overrides), and whatever local execution refutes as `execution` (a call from an address
 * with code, the KZG precompile, BLOCKHASH without a trusted hash, a fork after Osaka).
 */
import {
  createProofReader,
  estimateGas,
  executeCall,
  isVerificationError,
  type StateRequest,
} from '../../../verify/index.js';
import type { UpstreamReply } from '../../rpc/forwarder.js';
import { answerOf, atTarget, type CheckContext, targetOf, Unprovable } from './check-context.js';
import { OriginRefused } from './origin-ask.js';

export async function checkExecution(context: CheckContext): Promise<UpstreamReply> {
  const [request, , overrides] = context.params;
  if (overrides !== undefined) throw new Unprovable('state overrides cannot be proven');
  const { ask, chain, network } = context;
  const header = await context.blocks.header(targetOf(context), ask);
  const accessList = await accessListOf(context, request);
  const source = createProofReader({
    call: (method, params) => ask.call(method, params),
    header,
    trustedBlockHash: async (number) => (await chain.anchor(network, Number(number)))?.hash,
  });
  const run = context.call.method === 'eth_estimateGas' ? estimateGas : executeCall;
  try {
    const answer = await run(request, {
      header,
      chainId: context.chainId,
      source,
      ...(accessList === undefined ? {} : { accessList }),
    });
    return answerOf(answer, ask.candidate, context.level);
  } catch (err) {
    if (isVerificationError(err) && err.failure.check === 'execution')
      throw new Unprovable(err.message, { cause: err });
    throw err;
  }
}

/** The origin's eth_createAccessList for the call, when it answers a well-formed one. */
async function accessListOf(context: CheckContext, request: unknown): Promise<StateRequest[] | undefined> {
  let answer: unknown;
  try {
    answer = await context.ask.call('eth_createAccessList', [request, atTarget(context)]);
  } catch (err) {
    if (err instanceof OriginRefused) return undefined;
    throw err;
  }
  const list = (answer as { accessList?: unknown } | null)?.accessList;
  if (!Array.isArray(list)) return undefined;
  const wellFormed = list.every(
    (entry) =>
      typeof entry?.address === 'string' &&
      /^0x[0-9a-fA-F]{40}$/.test(entry.address) &&
      (entry.storageKeys === undefined ||
        (Array.isArray(entry.storageKeys) &&
          entry.storageKeys.every((key: unknown) => typeof key === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(key)))),
  );
  return wellFormed ? (list as StateRequest[]) : undefined;
}
