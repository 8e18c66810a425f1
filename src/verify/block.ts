/**
 * A whole block answer (`eth_getBlockByNumber` / `eth_getBlockByHash`) proven against the trusted hash:
 *
 * - the header (header.ts): its fields hash to the answered and the trusted hash;
 * - full transactions: the transactions root and each transaction's own fields (transactions.ts);
 *   transaction hashes alone cannot be tied to the header and are listed as uncovered;
 * - `withdrawals`: the withdrawals root; `uncles`: empty if and only if the uncles hash is the empty-list
 *   hash; a non-empty list is proven only with the uncle headers (`proveUncles`), else listed as uncovered;
 * - `size`: with full transactions and no uncles it is recomputed (the RLP length of the block; with
 *   withdrawals, the length with or without their list: geth counts it, anvil does not).
 * Every other field of the answer (`totalDifficulty`, a client's additions) is listed in `uncovered`.
 */
import { RLP } from '@ethereumjs/rlp';
import { KECCAK256_RLP, KECCAK256_RLP_ARRAY } from '@ethereumjs/util';
import { dataBytes, keccak, orderedTrieRoot, quantityBytes, sameHex, sameQuantity, toHex } from './encoding.js';
import { refute, settle, type Verified } from './failure.js';
import { encodeHeader, type HeaderExpectation, proveHeader, type TrustedHeader } from './header.js';
import { headerShape, parseShape, type RpcWithdrawal, withdrawalShape } from './rpc-shapes.js';
import { type ProvenTransaction, proveBlockTransactions } from './transactions.js';

export interface ProvenBlock {
  readonly header: TrustedHeader;
  /** The proven transactions when the answer had full transaction objects. */
  readonly transactions?: readonly ProvenTransaction[];
  /** Fields of the answer (top level, or `transactions.<field>`) that no check covered. */
  readonly uncovered: readonly string[];
}

const BLOCK_FIELDS = new Set([...Object.keys(headerShape.shape), 'size', 'transactions', 'uncles', 'withdrawals']);

const EMPTY_UNCLES = toHex(KECCAK256_RLP_ARRAY);
const EMPTY_TRIE = toHex(KECCAK256_RLP);

function encodeWithdrawal(withdrawal: RpcWithdrawal): Uint8Array[] {
  return [
    quantityBytes(withdrawal.index),
    quantityBytes(withdrawal.validatorIndex),
    dataBytes(withdrawal.address),
    quantityBytes(withdrawal.amount),
  ];
}

async function proveWithdrawals(answer: unknown, header: TrustedHeader): Promise<Uint8Array[][]> {
  const where = { block: header.number };
  if (header.withdrawalsRoot === undefined)
    refute('withdrawals-root', 'withdrawals in a block without a withdrawals root', where);
  if (!Array.isArray(answer)) return refute('answer-shape', 'withdrawals is not a list', where);
  const withdrawals = answer.map((one, index) =>
    encodeWithdrawal(parseShape(withdrawalShape, one, `withdrawal ${index}`, where)),
  );
  const root = await orderedTrieRoot(withdrawals.map((fields) => RLP.encode(fields)));
  if (!sameHex(root, header.withdrawalsRoot)) {
    refute('withdrawals-root', `the withdrawals hash to root ${root}, not ${header.withdrawalsRoot}`, where);
  }
  return withdrawals;
}

/** Proves a non-empty uncle list from the uncle headers (`eth_getUncleByBlockHashAndIndex` answers). */
export function proveUncles(
  uncleAnswers: readonly unknown[],
  header: TrustedHeader,
  uncleHashes?: readonly string[],
): void {
  const uncles = uncleAnswers.map((answer) => proveHeader(answer));
  uncles.forEach((uncle, index) => {
    const named = uncleHashes?.[index];
    if (named !== undefined && !sameHex(named, uncle.hash)) {
      refute('uncles-hash', `uncle ${index} is ${uncle.hash}, the block names ${named}`, { block: header.number });
    }
  });
  const list = uncleAnswers.map((answer) => RLP.decode(encodeHeader(parseShape(headerShape, answer, 'uncle header'))));
  const hash = toHex(keccak(RLP.encode(list as Uint8Array[][])));
  if (!sameHex(hash, header.sha3Uncles)) {
    refute('uncles-hash', `the uncle headers hash to ${hash}, not ${header.sha3Uncles}`, { block: header.number });
  }
}

/**
 * The block's RLP length: [header, transactions, uncles (empty), withdrawals (when present)], and the
 * length without the withdrawals list, which is what anvil reports.
 */
function blockSizes(
  answer: Record<string, unknown>,
  transactions: readonly ProvenTransaction[],
  withdrawals?: Uint8Array[][],
): bigint[] {
  const header = RLP.decode(encodeHeader(parseShape(headerShape, answer, 'block header')));
  const body = transactions.map((tx) => (tx.type === 0 ? RLP.decode(tx.encoded) : tx.encoded));
  const parts = [header, body, []];
  const sizes = [BigInt(RLP.encode(parts as Uint8Array[]).length)];
  if (withdrawals !== undefined) sizes.push(BigInt(RLP.encode([...parts, withdrawals] as Uint8Array[]).length));
  return sizes;
}

async function proveBody(block: Record<string, unknown>, header: TrustedHeader, uncovered: Set<string>) {
  const where = { block: header.number };
  const list = block.transactions;
  if (list !== undefined && !Array.isArray(list)) refute('answer-shape', 'transactions is not a list', where);
  let transactions: readonly ProvenTransaction[] | undefined;
  if (Array.isArray(list) && list.length === 0) {
    if (!sameHex(header.transactionsRoot, EMPTY_TRIE))
      refute('transactions-root', 'no transactions, but a root', where);
    transactions = [];
  } else if (Array.isArray(list) && list.every((tx) => typeof tx === 'object' && tx !== null)) {
    const proven = await proveBlockTransactions(list, header);
    transactions = proven.transactions;
    for (const field of proven.uncovered) uncovered.add(`transactions.${field}`);
  } else if (Array.isArray(list)) uncovered.add('transactions');
  const withdrawals = block.withdrawals === undefined ? undefined : await proveWithdrawals(block.withdrawals, header);
  return { transactions, withdrawals };
}

function checkUncles(block: Record<string, unknown>, header: TrustedHeader, uncovered: Set<string>): boolean {
  const uncles = block.uncles;
  if (uncles === undefined) return true;
  if (!Array.isArray(uncles)) refute('answer-shape', 'uncles is not a list', { block: header.number });
  if ((uncles.length === 0) !== sameHex(header.sha3Uncles, EMPTY_UNCLES)) {
    refute('uncles-hash', `${uncles.length} uncles under uncles hash ${header.sha3Uncles}`, { block: header.number });
  }
  if (uncles.length > 0) uncovered.add('uncles');
  return uncles.length === 0;
}

async function proveBlockAnswer(answer: unknown, expected: HeaderExpectation): Promise<ProvenBlock> {
  const header = proveHeader(answer, expected);
  const block = answer as Record<string, unknown>;
  const uncovered = new Set(Object.keys(block).filter((field) => !BLOCK_FIELDS.has(field)));
  const noUncles = checkUncles(block, header, uncovered);
  const { transactions, withdrawals } = await proveBody(block, header, uncovered);
  if (block.size !== undefined) {
    if (transactions === undefined || !noUncles || typeof block.size !== 'string') uncovered.add('size');
    else {
      const sizes = blockSizes(block, transactions, withdrawals);
      if (!sizes.some((size) => sameQuantity(block.size as string, size))) {
        const said = BigInt(block.size);
        refute('block-field', `the block is ${sizes.at(-1)} bytes, not ${said}`, {
          block: header.number,
          field: 'size',
        });
      }
    }
  }
  return { header, transactions, uncovered: [...uncovered].sort() };
}

/** Proves a block answer: header hash (and the trusted hash when given), transactions, withdrawals, uncles. */
export function verifyBlock(answer: unknown, expected: HeaderExpectation = {}): Promise<Verified<ProvenBlock>> {
  return settle(() => proveBlockAnswer(answer, expected));
}
