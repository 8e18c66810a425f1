/**
 * Checks of block answers (SPEC §18 `integrity`): the origin's answer to the client's call, proven, then
 * passed on byte for byte. An error answer or a null passes as it is, unproven (the handler says `none`).
 *
 * - `eth_getBlockByNumber` (asked at the trusted block: block-target.ts), `eth_getBlockByHash`: the
 *   header fields hash to the trusted hash (by hash: the hash asked, so a block off the canonical chain
 *   the client named is still answered); with full transactions, the transactions root and each
 *   transaction; withdrawals, uncles, size (verify/ `verifyBlock`). A list of transaction hashes is
 *   covered by the block's full transactions (one more call, kept per block: proven-blocks.ts).
 *   `totalDifficulty` and fields a client adds are not covered by any hash: passed on as they are.
 * - `eth_getTransactionReceipt`: its block must be the trusted block at its height (the anchor may ask
 *   origins), and the receipt the one at its index among the block's receipts, proven against the
 *   receipts root (the block's receipts and transactions: proven-blocks.ts).
 * - `eth_getBlockReceipts`: every receipt, against the target block's receipts root and transactions.
 */
import { proveReceipt, VerificationError, verifyBlock, verifyBlockReceipts } from '../../../verify/index.js';
import type { UpstreamReply } from '../../rpc/forwarder.js';
import { answered, type CheckContext, proven, Unanchored } from './check-context.js';

const HASH = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]{1,16}$/;

export async function checkBlock(context: CheckContext): Promise<UpstreamReply> {
  const { reply, value } = await answered(context);
  if (value === null || value === undefined) return reply;
  const { target } = context;
  const expected =
    target?.kind === 'trusted'
      ? { hash: target.block.hash, number: BigInt(target.block.number) }
      : { hash: String(target?.hash ?? context.params[0]) };
  const block = proven(await verifyBlock(value, expected));
  const listed = (value as { transactions?: unknown }).transactions;
  if (Array.isArray(listed) && listed.length > 0 && typeof listed[0] === 'string') {
    const transactions = await context.blocks.transactions(block.header, context.ask);
    const same =
      transactions.length === listed.length &&
      transactions.every((tx, i) => tx.hash.toLowerCase() === String(listed[i]).toLowerCase());
    if (!same) {
      throw new VerificationError({
        check: 'transactions-root',
        reason: 'the listed transaction hashes are not the block’s transactions',
        block: block.header.number,
      });
    }
  }
  return { ...reply, verified: context.level };
}

export async function checkReceipt(context: CheckContext): Promise<UpstreamReply> {
  const { reply, value } = await answered(context);
  if (value === null || value === undefined) return reply;
  const { blockHash, blockNumber } = value as { blockHash?: unknown; blockNumber?: unknown };
  if (
    typeof blockHash !== 'string' ||
    !HASH.test(blockHash) ||
    typeof blockNumber !== 'string' ||
    !QUANTITY.test(blockNumber)
  ) {
    throw new VerificationError({ check: 'answer-shape', reason: 'the receipt names no block' });
  }
  const number = Number(blockNumber);
  const trusted = await context.chain.anchor(context.network, number);
  if (trusted === undefined) throw new Unanchored(`block ${number}`);
  if (trusted.hash !== blockHash.toLowerCase()) {
    throw new VerificationError({
      check: 'receipt',
      reason: `the receipt names block ${blockHash} at ${number}; the trusted block there is ${trusted.hash}`,
      block: BigInt(number),
    });
  }
  const header = await context.blocks.header({ kind: 'trusted', block: trusted }, context.ask);
  proveReceipt(value, await context.blocks.receipts(header, context.ask), header);
  return { ...reply, verified: context.level };
}

export async function checkBlockReceipts(context: CheckContext): Promise<UpstreamReply> {
  const { reply, value } = await answered(context);
  if (value === null || value === undefined) return reply;
  if (!Array.isArray(value) || context.target === undefined) {
    throw new VerificationError({ check: 'answer-shape', reason: 'eth_getBlockReceipts did not answer a list' });
  }
  const header = await context.blocks.header(context.target, context.ask);
  const transactions = await context.blocks.transactions(header, context.ask);
  context.blocks.keepReceipts(proven(await verifyBlockReceipts(value, header, transactions)));
  return { ...reply, verified: context.level };
}
