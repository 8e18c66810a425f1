/**
 * State reads proven against the target block's `stateRoot` (SPEC §18 `proofs`), from an `eth_getProof`
 * the attempt's origin answers at that block (verify/ `proveAccount`):
 * - `eth_getBalance`, `eth_getTransactionCount`: the proven balance or nonce is the answer (an origin's
 *   eth_getBalance is never asked: the proof answers it; one origin call instead of one);
 * - `eth_getStorageAt`: the proven value of the slot, as 32 bytes (as origins answer it);
 * - `eth_getCode`: the origin's eth_getCode at that block, its keccak the proven code hash (no call for
 *   an account without code);
 * - `eth_getProof` asked by the client: the origin's answer itself, proven, passed on byte for byte.
 * An address or slot that is not what the method takes is not checked here: the call is forwarded as
 * before (`Unprovable`), and the origin answers it.
 */
import { EMPTY_CODE_HASH, proveAccount, proveCode, storageSlotKey } from '../../../verify/index.js';
import type { UpstreamReply } from '../../rpc/forwarder.js';
import { answerOf, atTarget, type CheckContext, quantity, targetOf, Unprovable } from './check-context.js';
import { resultOf } from './origin-ask.js';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const SLOT = /^0x[0-9a-fA-F]{1,64}$/;

function addressOf(context: CheckContext): string {
  const address = context.params[0];
  if (typeof address !== 'string' || !ADDRESS.test(address)) throw new Unprovable('not an address');
  return address;
}

/** eth_getBalance, eth_getTransactionCount. */
export async function checkAccount(context: CheckContext): Promise<UpstreamReply> {
  const address = addressOf(context);
  const header = await context.blocks.header(targetOf(context), context.ask);
  const answer = await context.ask.call('eth_getProof', [address, [], atTarget(context)]);
  const account = await proveAccount(header.stateRoot, address, answer);
  const value = context.call.method === 'eth_getBalance' ? account.balance : account.nonce;
  return answerOf({ result: quantity(value) }, context.ask.candidate, context.level);
}

export async function checkStorage(context: CheckContext): Promise<UpstreamReply> {
  const address = addressOf(context);
  const slot = context.params[1];
  if (typeof slot !== 'string' || !SLOT.test(slot)) throw new Unprovable('not a storage slot');
  const header = await context.blocks.header(targetOf(context), context.ask);
  const key = storageSlotKey(slot);
  const answer = await context.ask.call('eth_getProof', [address, [key], atTarget(context)]);
  const account = await proveAccount(header.stateRoot, address, answer, [key]);
  const value = account.storage.get(key) ?? 0n;
  return answerOf({ result: `0x${value.toString(16).padStart(64, '0')}` }, context.ask.candidate, context.level);
}

export async function checkCode(context: CheckContext): Promise<UpstreamReply> {
  const address = addressOf(context);
  const header = await context.blocks.header(targetOf(context), context.ask);
  const answer = await context.ask.call('eth_getProof', [address, [], atTarget(context)]);
  const account = await proveAccount(header.stateRoot, address, answer);
  if (account.codeHash === EMPTY_CODE_HASH) return answerOf({ result: '0x' }, context.ask.candidate, context.level);
  const code = await context.ask.call('eth_getCode', [address, atTarget(context)]);
  proveCode(code, account.codeHash, address);
  return answerOf({ result: code }, context.ask.candidate, context.level);
}

export async function checkProof(context: CheckContext): Promise<UpstreamReply> {
  const address = addressOf(context);
  const slots = context.params[1];
  if (!Array.isArray(slots) || !slots.every((slot) => typeof slot === 'string' && SLOT.test(slot))) {
    throw new Unprovable('not a list of storage slots');
  }
  const header = await context.blocks.header(targetOf(context), context.ask);
  const reply = await context.ask.forward(context.wire);
  if (reply.outcome?.key !== 'result') return reply;
  await proveAccount(header.stateRoot, address, resultOf(reply), slots as string[]);
  return { ...reply, verified: context.level };
}
