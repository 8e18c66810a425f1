/**
 * What the ledger reads from a signed transaction: its hash, its sender (recovered from the signature)
 * and its nonce, by `@ethereumjs/tx` — the maintained EthereumJS implementation of every transaction type
 * (legacy with or without EIP-155, 2930, 1559, 4844 — also in its network form with blobs — and 7702);
 * secp256k1 recovery comes from `@noble/curves` under it. The network's `chain_id` is the chain the
 * signature must be for. Recovery costs about a millisecond of CPU, so it runs in the recorder's
 * batches (recorder.ts), never on a send's answer path.
 */
import { createCustomCommon, Mainnet } from '@ethereumjs/common';
import { createBlob4844TxFromSerializedNetworkWrapper, createTxFromRLP, type TypedTransaction } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';

export interface DecodedTransaction {
  /** 0x + 64 lowercase hex. */
  readonly hash: string;
  /** 0x + 40 lowercase hex. */
  readonly from: string;
  readonly nonce: number;
}

const RAW = /^0x(?:[0-9a-fA-F]{2})+$/;
const BLOB_TX_TYPE = 0x03;

type Common = ReturnType<typeof createCustomCommon>;
const commons = new Map<number, Common>();

function commonFor(chainId: number): Common {
  let common = commons.get(chainId);
  if (common === undefined) {
    common = createCustomCommon({ chainId }, Mainnet);
    commons.set(chainId, common);
  }
  return common;
}

/** Decodes a raw transaction (0x hex as the client sent it); throws an Error saying why it cannot. */
export function decodeTransaction(raw: string, chainId: number): DecodedTransaction {
  if (!RAW.test(raw)) throw new Error('not 0x-prefixed hex bytes');
  const bytes = hexToBytes(raw as `0x${string}`);
  const common = commonFor(chainId);
  let tx: TypedTransaction;
  try {
    tx = createTxFromRLP(bytes, { common });
  } catch (err) {
    // A blob transaction sent with its blobs (the network wrapper): its hash is the inner transaction's.
    if (bytes[0] !== BLOB_TX_TYPE) throw err;
    tx = createBlob4844TxFromSerializedNetworkWrapper(bytes, { common });
  }
  if (!tx.isSigned()) throw new Error('the transaction is not signed');
  if (tx.nonce > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('the nonce is beyond 2^53 − 1');
  return {
    hash: bytesToHex(tx.hash()).toLowerCase(),
    from: tx.getSenderAddress().toString().toLowerCase(),
    nonce: Number(tx.nonce),
  };
}
