/**
 * Receipts (`eth_getBlockReceipts`, `eth_getTransactionReceipt`) checked against a trusted header's
 * `receiptsRoot`: each receipt re-encoded in consensus form — `type || RLP([status or post-state root,
 * cumulativeGasUsed, logsBloom, logs])`, the type byte absent for legacy receipts and a 32-byte state
 * root instead of a status before Byzantium — and the ordered trie of the encodings compared with the root.
 *
 * The root covers status, cumulative gas, bloom and the logs' address, topics and data. The rest of a
 * receipt is derived and compared: position (`transactionIndex`, `blockHash`, `blockNumber`,
 * `blockTimestamp`), `gasUsed`
 * (the step in cumulative gas), each log's block, transaction and running `logIndex`, `removed: false`.
 * With the block's proven transactions (transactions.ts) also `transactionHash`, `from`, `to`,
 * `contractAddress`, `effectiveGasPrice` and `blobGasUsed`; without them those are listed as uncovered, and
 * so is `blobGasPrice` always (it depends on the fork's blob schedule).
 * A single receipt is proven by its place in the proven receipts of its block (`proveReceipt`).
 */
import { RLP } from '@ethereumjs/rlp';
import { createAddressFromString, equalsBytes, generateAddress } from '@ethereumjs/util';
import {
  dataBytes,
  type Hex,
  orderedTrieRoot,
  quantityBytes,
  sameHex,
  sameQuantity,
  statesQuantity,
  toHex,
} from './encoding.js';
import { refute, settle, type Verified } from './failure.js';
import type { TrustedHeader } from './header.js';
import { parseShape, type RpcReceipt, receiptShape } from './rpc-shapes.js';
import type { ProvenTransaction } from './transactions.js';

/** Blob gas per blob (EIP-4844), the same in every fork that has blobs so far. */
const GAS_PER_BLOB = 131_072n;

/** Receipt types this module encodes: legacy, 2930, 1559, 4844, 7702. */
const KNOWN_TYPES = new Set([0, 1, 2, 3, 4]);

/** Fields derived only with the block's proven transactions. */
const TRANSACTION_FIELDS = ['transactionHash', 'from', 'to', 'contractAddress', 'effectiveGasPrice', 'blobGasUsed'];

const COVERED_FIELDS = new Set([...Object.keys(receiptShape.shape), 'blobGasUsed', 'blockTimestamp']);

export interface ProvenReceipt {
  readonly transactionHash: Hex;
  readonly transactionIndex: number;
  readonly cumulativeGasUsed: bigint;
  readonly gasUsed: bigint;
  /** Index of the receipt's first log within the block. */
  readonly firstLogIndex: number;
  /** The receipt as answered (every field checked or listed as uncovered). */
  readonly answer: RpcReceipt;
  readonly encoded: Uint8Array;
}

export interface ProvenBlockReceipts {
  readonly blockHash: Hex;
  readonly blockNumber: bigint;
  readonly receipts: readonly ProvenReceipt[];
  /** Receipt fields no check covered (without transactions: the transaction fields; a client's additions). */
  readonly uncovered: readonly string[];
}

/** The consensus encoding of one receipt. */
export function encodeReceipt(receipt: RpcReceipt, where: { block?: bigint } = {}): Uint8Array {
  const type = receipt.type === undefined ? 0 : Number(BigInt(receipt.type));
  if (!KNOWN_TYPES.has(type)) refute('receipt', `receipt type ${type} is not known here`, where);
  const outcome =
    receipt.root !== undefined
      ? dataBytes(receipt.root)
      : receipt.status !== undefined
        ? quantityBytes(receipt.status)
        : refute('answer-shape', `receipt ${receipt.transactionHash} has neither status nor root`, where);
  const logs = receipt.logs.map((log) => [dataBytes(log.address), log.topics.map(dataBytes), dataBytes(log.data)]);
  const body = RLP.encode([outcome, quantityBytes(receipt.cumulativeGasUsed), dataBytes(receipt.logsBloom), logs]);
  if (type === 0) return body;
  const typed = new Uint8Array(body.length + 1);
  typed[0] = type;
  typed.set(body, 1);
  return typed;
}

interface ReceiptContext {
  readonly header: TrustedHeader;
  readonly index: number;
  readonly previousCumulativeGas: bigint;
  readonly firstLogIndex: number;
  readonly transaction?: ProvenTransaction;
}

function mismatch(receipt: RpcReceipt, field: string, said: unknown, is: unknown, block: bigint): never {
  return refute(
    'receipt',
    `receipt ${receipt.transactionHash} says ${field} ${String(said)}, but it is ${String(is)}`,
    {
      block,
      field,
    },
  );
}

/** Checks the fields of one receipt that the root does not cover; returns its gas used. */
function checkReceiptFields(receipt: RpcReceipt, context: ReceiptContext): bigint {
  const { header, index } = context;
  const block = header.number;
  if (!sameQuantity(receipt.transactionIndex, BigInt(index)))
    mismatch(receipt, 'transactionIndex', receipt.transactionIndex, index, block);
  if (!sameHex(receipt.blockHash, header.hash)) mismatch(receipt, 'blockHash', receipt.blockHash, header.hash, block);
  if (!sameQuantity(receipt.blockNumber, block)) mismatch(receipt, 'blockNumber', receipt.blockNumber, block, block);
  const timestamp = (receipt as Record<string, unknown>).blockTimestamp;
  if (timestamp !== undefined && !statesQuantity(timestamp, header.timestamp)) {
    mismatch(receipt, 'blockTimestamp', timestamp, header.timestamp, block);
  }
  const gasUsed = BigInt(receipt.cumulativeGasUsed) - context.previousCumulativeGas;
  if (gasUsed < 0n || !sameQuantity(receipt.gasUsed, gasUsed))
    mismatch(receipt, 'gasUsed', receipt.gasUsed, gasUsed, block);
  receipt.logs.forEach((log, offset) => {
    const logIndex = context.firstLogIndex + offset;
    const where = { block, field: `logs.${offset}` };
    const wrong =
      (log.blockHash !== undefined && !sameHex(log.blockHash, header.hash)) ||
      (log.blockNumber !== undefined && !sameQuantity(log.blockNumber, block)) ||
      (log.transactionHash !== undefined && !sameHex(log.transactionHash, receipt.transactionHash)) ||
      (log.transactionIndex !== undefined && !sameQuantity(log.transactionIndex, BigInt(index))) ||
      (log.logIndex !== undefined && !sameQuantity(log.logIndex, BigInt(logIndex))) ||
      (log.blockTimestamp !== undefined && !statesQuantity(log.blockTimestamp, header.timestamp)) ||
      log.removed === true;
    if (wrong) refute('receipt', `log ${logIndex} of receipt ${receipt.transactionHash} is misplaced`, where);
  });
  if (context.transaction !== undefined) checkAgainstTransaction(receipt, context.transaction, block);
  return gasUsed;
}

/** The receipt fields that restate its transaction. */
function checkAgainstTransaction(
  receipt: RpcReceipt & Record<string, unknown>,
  tx: ProvenTransaction,
  block: bigint,
): void {
  if (!sameHex(receipt.transactionHash, tx.hash))
    mismatch(receipt, 'transactionHash', receipt.transactionHash, tx.hash, block);
  if (!sameHex(receipt.from, tx.from)) mismatch(receipt, 'from', receipt.from, tx.from, block);
  const to = receipt.to ?? undefined;
  if (
    (to === undefined) !== (tx.to === undefined) ||
    (to !== undefined && tx.to !== undefined && !sameHex(to, tx.to))
  ) {
    mismatch(receipt, 'to', to, tx.to, block);
  }
  if (receipt.type !== undefined && !sameQuantity(receipt.type, BigInt(tx.type)))
    mismatch(receipt, 'type', receipt.type, tx.type, block);
  const created =
    tx.to === undefined
      ? toHex(generateAddress(createAddressFromString(tx.from).bytes, quantityBytes(`0x${tx.nonce.toString(16)}`)))
      : undefined;
  const contract = receipt.contractAddress ?? undefined;
  if (
    (contract === undefined) !== (created === undefined) ||
    (contract !== undefined && !sameHex(contract, created ?? ''))
  ) {
    mismatch(receipt, 'contractAddress', contract, created, block);
  }
  if (receipt.effectiveGasPrice !== undefined && tx.effectiveGasPrice !== undefined) {
    if (!sameQuantity(receipt.effectiveGasPrice, tx.effectiveGasPrice)) {
      mismatch(receipt, 'effectiveGasPrice', receipt.effectiveGasPrice, tx.effectiveGasPrice, block);
    }
  }
  const blobGas = receipt.blobGasUsed;
  if (
    blobGas !== undefined &&
    (typeof blobGas !== 'string' || !sameQuantity(blobGas, BigInt(tx.blobCount) * GAS_PER_BLOB))
  ) {
    mismatch(receipt, 'blobGasUsed', blobGas, BigInt(tx.blobCount) * GAS_PER_BLOB, block);
  }
}

/**
 * Proves a block's receipts (all of them, in order) against its trusted header. `transactions`, the
 * block's proven transactions, lets the receipts' transaction fields be checked too.
 */
export async function proveBlockReceipts(
  answers: readonly unknown[],
  header: TrustedHeader,
  transactions?: readonly ProvenTransaction[],
): Promise<ProvenBlockReceipts> {
  const where = { block: header.number };
  if (transactions !== undefined && transactions.length !== answers.length) {
    refute('receipt', `${answers.length} receipts for ${transactions.length} transactions`, where);
  }
  const parsed = answers.map((answer, index) => parseShape(receiptShape, answer, `receipt ${index}`, where));
  const encoded = parsed.map((receipt) => encodeReceipt(receipt, where));
  const root = await orderedTrieRoot(encoded);
  if (!sameHex(root, header.receiptsRoot)) {
    refute('receipts-root', `the receipts hash to root ${root}, not ${header.receiptsRoot}`, where);
  }
  const receipts: ProvenReceipt[] = [];
  let previousCumulativeGas = 0n;
  let firstLogIndex = 0;
  const uncovered = new Set<string>();
  const unchecked = (field: string) =>
    !COVERED_FIELDS.has(field) || (transactions === undefined && TRANSACTION_FIELDS.includes(field));
  for (const [index, receipt] of parsed.entries()) {
    const context = { header, index, previousCumulativeGas, firstLogIndex, transaction: transactions?.[index] };
    const gasUsed = checkReceiptFields(receipt, context);
    receipts.push({
      transactionHash: receipt.transactionHash,
      transactionIndex: index,
      cumulativeGasUsed: BigInt(receipt.cumulativeGasUsed),
      gasUsed,
      firstLogIndex,
      answer: receipt,
      encoded: encoded[index] as Uint8Array,
    });
    for (const field of Object.keys(receipt)) if (unchecked(field)) uncovered.add(field);
    previousCumulativeGas = BigInt(receipt.cumulativeGasUsed);
    firstLogIndex += receipt.logs.length;
  }
  return { blockHash: header.hash, blockNumber: header.number, receipts, uncovered: [...uncovered].sort() };
}

/** Fields of a single receipt compared with the proven receipt at its position. */
const RESTATED_FIELDS = [
  ['transactionHash', sameHex],
  ['from', sameHex],
  ['to', sameHex],
  ['contractAddress', sameHex],
  ['effectiveGasPrice', sameQuantity],
  ['type', sameQuantity],
] as const;

/**
 * Proves one receipt (`eth_getTransactionReceipt`) by its place in its block's proven receipts: the same
 * consensus encoding and the same derived fields as the proven receipt at its `transactionIndex`.
 */
export function proveReceipt(answer: unknown, block: ProvenBlockReceipts, header: TrustedHeader): ProvenReceipt {
  const where = { block: block.blockNumber };
  const receipt = parseShape(receiptShape, answer, 'receipt', where);
  const index = Number(BigInt(receipt.transactionIndex));
  const proven =
    block.receipts[index] ?? refute('receipt', `block ${block.blockNumber} has no receipt ${index}`, where);
  const encoded = encodeReceipt(receipt, where);
  if (!equalsBytes(encoded, proven.encoded)) {
    refute('receipts-root', `receipt ${receipt.transactionHash} is not the receipt at ${index} in its block`, where);
  }
  const previous = block.receipts[index - 1];
  checkReceiptFields(receipt, {
    header,
    index,
    previousCumulativeGas: previous?.cumulativeGasUsed ?? 0n,
    firstLogIndex: proven.firstLogIndex,
  });
  for (const [field, equal] of RESTATED_FIELDS) {
    const said = receipt[field] ?? null;
    const is = proven.answer[field] ?? null;
    const same = said === null || is === null ? said === is : equal(said, is);
    if (!same) mismatch(receipt, field, said, is, block.blockNumber);
  }
  return { ...proven, answer: receipt };
}

/** `proveBlockReceipts` as a result. */
export function verifyBlockReceipts(
  answers: readonly unknown[],
  header: TrustedHeader,
  transactions?: readonly ProvenTransaction[],
): Promise<Verified<ProvenBlockReceipts>> {
  return settle(() => proveBlockReceipts(answers, header, transactions));
}

/** `proveReceipt` as a result. */
export function verifyReceipt(
  answer: unknown,
  block: ProvenBlockReceipts,
  header: TrustedHeader,
): Promise<Verified<ProvenReceipt>> {
  return settle(() => proveReceipt(answer, block, header));
}
