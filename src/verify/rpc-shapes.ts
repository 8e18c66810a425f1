/**
 * The JSON-RPC objects the checks read, as zod schemas: block headers, transactions, withdrawals,
 * receipts, logs and `eth_getProof` answers, in the execution-apis shapes (geth, anvil, reth, …).
 *
 * - Objects are loose: fields a check does not read pass (clients add their own, e.g. `totalDifficulty`,
 *   `blockTimestamp`); each check lists which fields of an answer it leaves uncovered.
 * - `null` for an optional field counts as absent (a header layout is chosen by the fields present).
 * - Quantities are hex of at most 256 bits; leading zeros are accepted (the value is what is hashed).
 * - `parseShape` refutes with check `answer-shape`, naming the path of the first wrong field.
 */
import { z } from 'zod';
import type { Hex } from './encoding.js';
import { refute, type VerifyFailure } from './failure.js';

const hexString = (pattern: RegExp, message: string) =>
  z
    .string()
    .regex(pattern, message)
    .transform((value) => value as Hex);
const hexData = hexString(/^0x(?:[0-9a-fA-F]{2})*$/, 'not 0x-prefixed hex bytes');
const quantity = hexString(/^0x[0-9a-fA-F]{1,64}$/, 'not a hex quantity of at most 256 bits');
const fixedHex = (bytes: number) =>
  hexString(new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`), `not ${bytes} bytes of 0x-prefixed hex`);
const hash = fixedHex(32);
const address = fixedHex(20);
/** Absent, or `null` read as absent. */
const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? undefined);

export const headerShape = z.looseObject({
  hash,
  parentHash: hash,
  sha3Uncles: hash,
  miner: address,
  stateRoot: hash,
  transactionsRoot: hash,
  receiptsRoot: hash,
  logsBloom: fixedHex(256),
  difficulty: quantity,
  number: quantity,
  gasLimit: quantity,
  gasUsed: quantity,
  timestamp: quantity,
  extraData: hexData,
  mixHash: hash,
  nonce: fixedHex(8),
  baseFeePerGas: optional(quantity),
  withdrawalsRoot: optional(hash),
  blobGasUsed: optional(quantity),
  excessBlobGas: optional(quantity),
  parentBeaconBlockRoot: optional(hash),
  requestsHash: optional(hash),
});
export type RpcHeader = z.infer<typeof headerShape>;

const accessList = z.array(z.looseObject({ address, storageKeys: z.array(hash) }));
export type RpcAccessList = z.infer<typeof accessList>;

const authorization = z.looseObject({
  chainId: quantity,
  address,
  nonce: quantity,
  yParity: quantity,
  r: quantity,
  s: quantity,
});

/** Fields a transaction object and a call object share, all optional. */
const feeAndTypeFields = {
  gasPrice: optional(quantity),
  maxFeePerGas: optional(quantity),
  maxPriorityFeePerGas: optional(quantity),
  maxFeePerBlobGas: optional(quantity),
  accessList: optional(accessList),
  blobVersionedHashes: optional(z.array(hash)),
  authorizationList: optional(z.array(authorization)),
};

export const transactionShape = z.looseObject({
  type: optional(quantity),
  hash,
  from: address,
  nonce: quantity,
  gas: quantity,
  to: optional(address),
  value: quantity,
  input: hexData,
  ...feeAndTypeFields,
  chainId: optional(quantity),
  v: quantity,
  r: quantity,
  s: quantity,
  yParity: optional(quantity),
  blockHash: optional(hash),
  blockNumber: optional(quantity),
  transactionIndex: optional(quantity),
});
export type RpcTransaction = z.infer<typeof transactionShape>;

export const withdrawalShape = z.looseObject({ index: quantity, validatorIndex: quantity, address, amount: quantity });
export type RpcWithdrawal = z.infer<typeof withdrawalShape>;

export const logShape = z.looseObject({
  address,
  topics: z.array(hash).max(4),
  data: hexData,
  blockHash: optional(hash),
  blockNumber: optional(quantity),
  transactionHash: optional(hash),
  transactionIndex: optional(quantity),
  logIndex: optional(quantity),
  removed: optional(z.boolean()),
});
export type RpcLog = z.infer<typeof logShape>;

export const receiptShape = z.looseObject({
  type: optional(quantity),
  status: optional(quantity),
  /** Receipts before Byzantium carry the post-transaction state root instead of a status. */
  root: optional(hash),
  cumulativeGasUsed: quantity,
  logsBloom: fixedHex(256),
  logs: z.array(logShape),
  transactionHash: hash,
  transactionIndex: quantity,
  blockHash: hash,
  blockNumber: quantity,
  gasUsed: quantity,
  from: address,
  to: optional(address),
  contractAddress: optional(address),
  effectiveGasPrice: optional(quantity),
});
export type RpcReceipt = z.infer<typeof receiptShape>;

/** A storage key as eth_getProof accepts and echoes it: up to 32 bytes of hex, leading zeros optional. */
const storageKey = hexString(/^0x[0-9a-fA-F]{1,64}$/, 'not a storage key of at most 32 bytes');

export const proofShape = z.looseObject({
  address,
  balance: quantity,
  nonce: quantity,
  codeHash: hash,
  storageHash: hash,
  accountProof: z.array(hexData),
  storageProof: z.array(z.looseObject({ key: storageKey, value: quantity, proof: z.array(hexData) })),
});
export type RpcProof = z.infer<typeof proofShape>;

/** `value` read through `schema`, or a refutation (`answer-shape`) naming `what` and the first wrong field. */
export function parseShape<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
  where: Omit<VerifyFailure, 'check' | 'reason'> = {},
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue === undefined || issue.path.length === 0 ? '' : ` at ${issue.path.join('.')}`;
  return refute('answer-shape', `${what}${path}: ${issue?.message ?? 'unreadable'}`, where);
}

/** The call object of eth_call / eth_estimateGas / eth_createAccessList. */
export const callShape = z.looseObject({
  from: optional(address),
  to: optional(address),
  gas: optional(quantity),
  value: optional(quantity),
  input: optional(hexData),
  data: optional(hexData),
  nonce: optional(quantity),
  ...feeAndTypeFields,
});
export type RpcCallRequest = z.infer<typeof callShape>;
