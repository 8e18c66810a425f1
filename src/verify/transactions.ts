/**
 * Transactions of a block answer with full transactions: each one re-encoded in consensus form with
 * @ethereumjs/tx (legacy, EIP-2930, EIP-1559, EIP-4844, EIP-7702), and the ordered trie of the encodings
 * compared with the trusted header's `transactionsRoot`.
 *
 * The root covers the signed fields. The fields of a transaction object it does not cover are derived
 * and compared one by one: `hash` (keccak of the encoding), `from` (the signature's signer),
 * `blockHash` / `blockNumber` / `transactionIndex` / `blockTimestamp` (the block and position), `chainId`
 * of a legacy transaction (from `v`), `v` beside `yParity`, and `gasPrice` of fee-market transactions
 * (the effective price under the block's base fee). Any other field is listed as uncovered.
 *
 * Recovering `from` costs one secp256k1 recovery per transaction (see docs/verification.md for times).
 */
import { createTx, type TypedTransaction, type TypedTxData } from '@ethereumjs/tx';
import { chainCommon, legacyChainId } from './chain-rules.js';
import { type Hex, keccak, orderedTrieRoot, sameHex, sameQuantity, statesQuantity, toHex } from './encoding.js';
import { refute, settle, type Verified } from './failure.js';
import type { TrustedHeader } from './header.js';
import { parseShape, type RpcTransaction, transactionShape } from './rpc-shapes.js';

/** A transaction object proven to be the one its encoding hashes to. */
export interface ProvenTransaction {
  readonly hash: Hex;
  readonly type: number;
  readonly from: Hex;
  readonly to: Hex | undefined;
  readonly nonce: bigint;
  /** The price per gas it paid in its block (legacy and EIP-2930: its gasPrice). */
  readonly effectiveGasPrice: bigint | undefined;
  readonly blobCount: number;
  /** The consensus encoding (typed: type byte || RLP). */
  readonly encoded: Uint8Array;
}

/** Fields every check of this module reads or derives; anything else in an answer is uncovered. */
const KNOWN_FIELDS = new Set([...Object.keys(transactionShape.shape), 'blockTimestamp']);

/** The ethereumjs transaction an RPC transaction object encodes, or a refutation naming what is wrong. */
function decode(tx: RpcTransaction, where: { block?: bigint }): TypedTransaction {
  const type = tx.type === undefined ? 0 : Number(BigInt(tx.type));
  const base = { nonce: tx.nonce, gasLimit: tx.gas, to: tx.to, value: tx.value, data: tx.input, r: tx.r, s: tx.s };
  const need = (field: keyof RpcTransaction): Hex => {
    const value = tx[field];
    if (typeof value !== 'string') refute('answer-shape', `a type ${type} transaction without ${field}`, where);
    return value as Hex;
  };
  const fees = () => ({ maxFeePerGas: need('maxFeePerGas'), maxPriorityFeePerGas: need('maxPriorityFeePerGas') });
  const typed = () => ({ ...base, chainId: need('chainId'), accessList: tx.accessList ?? [], v: tx.yParity ?? tx.v });
  let data: TypedTxData;
  let chainId: bigint | undefined;
  if (type === 0) {
    data = { ...base, type, gasPrice: need('gasPrice'), v: tx.v };
    chainId = legacyChainId(BigInt(tx.v));
  } else {
    chainId = BigInt(need('chainId'));
    if (type === 1) data = { ...typed(), type, gasPrice: need('gasPrice') };
    else if (type === 2) data = { ...typed(), type, ...fees() };
    else if (type === 3) {
      const blobVersionedHashes = tx.blobVersionedHashes ?? refute('answer-shape', 'a blob transaction without hashes');
      data = { ...typed(), type, ...fees(), maxFeePerBlobGas: need('maxFeePerBlobGas'), blobVersionedHashes };
    } else if (type === 4) {
      data = { ...typed(), type, ...fees(), authorizationList: tx.authorizationList ?? [] } as TypedTxData;
    } else refute('transaction', `transaction type ${type} is not known here`, where);
  }
  try {
    return createTx(data, { common: chainCommon(chainId ?? 1n), allowUnlimitedInitCodeSize: true });
  } catch (err) {
    return refute('transaction', `transaction ${tx.hash} does not decode: ${(err as Error).message}`, where);
  }
}

/** Proves a transaction object on its own: its encoding hashes to `hash` and its signature names `from`. */
export function proveTransaction(answer: unknown, where: { block?: bigint } = {}): ProvenTransaction {
  const tx = parseShape(transactionShape, answer, 'transaction', where);
  return proveParsed(tx, where);
}

function proveParsed(tx: RpcTransaction, where: { block?: bigint }): ProvenTransaction {
  const decoded = decode(tx, where);
  const encoded = decoded.serialize();
  const hash = toHex(keccak(encoded));
  if (!sameHex(hash, tx.hash))
    refute('transaction', `the fields of ${tx.hash} hash to ${hash}`, { ...where, field: 'hash' });
  let from: Hex;
  try {
    from = decoded.getSenderAddress().toString() as Hex;
  } catch (err) {
    return refute('transaction', `the signature of ${tx.hash} does not recover: ${(err as Error).message}`, where);
  }
  if (!sameHex(from, tx.from))
    refute('transaction', `${tx.hash} is signed by ${from}, not ${tx.from}`, { ...where, field: 'from' });
  if (decoded.type === 0) {
    const chainId = legacyChainId(BigInt(tx.v));
    if (tx.chainId !== undefined && chainId !== undefined && !sameQuantity(tx.chainId, chainId)) {
      refute('transaction', `${tx.hash} has v for chain ${chainId}, not ${BigInt(tx.chainId)}`, {
        ...where,
        field: 'chainId',
      });
    }
  } else if (tx.yParity !== undefined && !sameQuantity(tx.yParity, tx.v)) {
    refute('transaction', `${tx.hash} has yParity ${tx.yParity} but v ${tx.v}`, { ...where, field: 'v' });
  }
  return {
    hash,
    type: decoded.type,
    from,
    to: decoded.to?.toString() as Hex | undefined,
    nonce: decoded.nonce,
    effectiveGasPrice: 'gasPrice' in decoded ? decoded.gasPrice : undefined,
    blobCount: 'blobVersionedHashes' in decoded ? decoded.blobVersionedHashes.length : 0,
    encoded,
  };
}

/** Checks the block-position fields and the fee-market gasPrice of one transaction of `header`'s block. */
function checkPlacement(tx: RpcTransaction & Record<string, unknown>, index: number, header: TrustedHeader): void {
  const where = { block: header.number };
  if (tx.blockHash !== undefined && !sameHex(tx.blockHash, header.hash)) {
    refute('transaction', `${tx.hash} names block ${tx.blockHash}, not ${header.hash}`, {
      ...where,
      field: 'blockHash',
    });
  }
  if (tx.blockNumber !== undefined && !sameQuantity(tx.blockNumber, header.number)) {
    refute('transaction', `${tx.hash} names block number ${BigInt(tx.blockNumber)}`, {
      ...where,
      field: 'blockNumber',
    });
  }
  if (tx.transactionIndex !== undefined && !sameQuantity(tx.transactionIndex, BigInt(index))) {
    refute('transaction', `${tx.hash} at position ${index} says index ${BigInt(tx.transactionIndex)}`, {
      ...where,
      field: 'transactionIndex',
    });
  }
  const timestamp = tx.blockTimestamp;
  if (timestamp !== undefined && !statesQuantity(timestamp, header.timestamp)) {
    refute('transaction', `${tx.hash} names block time ${String(timestamp)}`, { ...where, field: 'blockTimestamp' });
  }
}

/** What paying `header`'s base fee makes of a fee-market transaction's price, checked against `gasPrice`. */
function effectivePrice(tx: RpcTransaction, header: TrustedHeader): bigint | undefined {
  if (tx.maxFeePerGas === undefined || tx.maxPriorityFeePerGas === undefined) return undefined;
  if (header.baseFeePerGas === undefined) return undefined;
  const maxFee = BigInt(tx.maxFeePerGas);
  const withTip = header.baseFeePerGas + BigInt(tx.maxPriorityFeePerGas);
  const price = maxFee < withTip ? maxFee : withTip;
  if (tx.gasPrice !== undefined && !sameQuantity(tx.gasPrice, price)) {
    refute('transaction', `${tx.hash} paid ${price} per gas, not ${BigInt(tx.gasPrice)}`, {
      block: header.number,
      field: 'gasPrice',
    });
  }
  return price;
}

export interface ProvenBlockTransactions {
  readonly transactions: readonly ProvenTransaction[];
  /** Fields of the transaction objects no check covered (e.g. a client's own additions). */
  readonly uncovered: readonly string[];
}

/** Proves a block's full transaction objects against its trusted header (root, then each one's fields). */
export async function proveBlockTransactions(
  answers: readonly unknown[],
  header: TrustedHeader,
): Promise<ProvenBlockTransactions> {
  const where = { block: header.number };
  const parsed = answers.map((answer, index) => parseShape(transactionShape, answer, `transaction ${index}`, where));
  const proven = parsed.map((tx) => proveParsed(tx, where));
  const root = await orderedTrieRoot(proven.map((tx) => tx.encoded));
  if (!sameHex(root, header.transactionsRoot)) {
    refute('transactions-root', `the transactions hash to root ${root}, not ${header.transactionsRoot}`, where);
  }
  const uncovered = new Set<string>();
  const transactions = parsed.map((tx, index) => {
    checkPlacement(tx, index, header);
    const price = effectivePrice(tx, header);
    for (const field of Object.keys(tx)) if (!KNOWN_FIELDS.has(field)) uncovered.add(field);
    const one = proven[index] as ProvenTransaction;
    return price === undefined ? one : { ...one, effectiveGasPrice: price };
  });
  return { transactions, uncovered: [...uncovered].sort() };
}

/** `proveTransaction` as a result (eth_getTransactionByHash: hash and signer; its block is `verifyBlock`'s). */
export function verifyTransaction(answer: unknown): Promise<Verified<ProvenTransaction>> {
  return settle(() => proveTransaction(answer));
}
