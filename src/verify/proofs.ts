/**
 * State proven against a trusted `stateRoot` from an `eth_getProof` answer (EIP-1186), with the
 * Merkle-Patricia proof walk of @ethereumjs/mpt:
 *
 * - Account: the account proof, walked from the trusted root along keccak(address), yields the account's
 *   RLP `[nonce, balance, storageRoot, codeHash]` or proves there is none (then balance 0, nonce 0, empty
 *   code, empty storage). The answer's own `balance`, `nonce`, `codeHash`, `storageHash` must equal the
 *   proven ones — an absent account may say 0x00…00 for its hashes (older geth) or the empty hashes.
 * - Storage: each asked slot's proof is walked from the proven storageHash along keccak(slot) (an empty
 *   storage trie proves every slot 0); the answer's `value` must equal the proven one. The answer must
 *   hold a proof for every slot asked, matched by key value (`0x0` and `0x00…00` are one slot).
 * - Code (`proveCode`): keccak(code) must equal the proven codeHash.
 * A node changed, swapped for another path's, dropped or added out of place breaks the walk (every node
 * is looked up by its hash from the root down), and the check refutes `account-proof` / `storage-proof`.
 * What is returned is what the proof proves, never the answer's claim.
 */
import { verifyMerkleProof } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { bytesToBigInt, KECCAK256_NULL, KECCAK256_RLP } from '@ethereumjs/util';
import { dataBytes, type Hex, keccak, quantityHex, sameHex, sameQuantity, toHex } from './encoding.js';
import { refute, settle, type Verified } from './failure.js';
import { parseShape, proofShape, type RpcProof } from './rpc-shapes.js';

export const EMPTY_CODE_HASH = toHex(KECCAK256_NULL);
export const EMPTY_STORAGE_HASH = toHex(KECCAK256_RLP);
const ZERO_HASH = `0x${'00'.repeat(32)}`;

export interface ProvenAccount {
  readonly address: Hex;
  /** False when the proof shows no account at the address. */
  readonly exists: boolean;
  readonly nonce: bigint;
  readonly balance: bigint;
  readonly codeHash: Hex;
  readonly storageHash: Hex;
  /** The asked slots (as `storageSlotKey` makes them) and their proven values. */
  readonly storage: ReadonlyMap<Hex, bigint>;
}

/** A storage slot as 32 bytes of lower-case hex, whatever form it was asked or echoed in. */
export function storageSlotKey(slot: string | bigint): Hex {
  return `0x${BigInt(slot).toString(16).padStart(64, '0')}`;
}

async function walk(root: string, key: Uint8Array, proof: readonly string[]): Promise<Uint8Array | null | undefined> {
  try {
    return await verifyMerkleProof(key, proof.map(dataBytes), { root: dataBytes(root), useKeyHashing: true });
  } catch {
    return undefined;
  }
}

interface AccountFields {
  readonly nonce: bigint;
  readonly balance: bigint;
  readonly storageHash: Hex;
  readonly codeHash: Hex;
}

const ABSENT: AccountFields = { nonce: 0n, balance: 0n, storageHash: EMPTY_STORAGE_HASH, codeHash: EMPTY_CODE_HASH };

function decodeAccount(leaf: Uint8Array, where: { address: string }): AccountFields {
  const fields = RLP.decode(leaf);
  if (!Array.isArray(fields) || fields.length !== 4 || !fields.every((field) => field instanceof Uint8Array)) {
    return refute('account-proof', 'the proven leaf is not an account', where);
  }
  const [nonce, balance, storageHash, codeHash] = fields as Uint8Array[];
  return {
    nonce: bytesToBigInt(nonce as Uint8Array),
    balance: bytesToBigInt(balance as Uint8Array),
    storageHash: toHex(storageHash as Uint8Array),
    codeHash: toHex(codeHash as Uint8Array),
  };
}

function checkClaims(answer: RpcProof, proven: AccountFields, exists: boolean, where: { address: string }): void {
  const sameHash = (said: string, is: Hex) => sameHex(said, is) || (!exists && sameHex(said, ZERO_HASH));
  const wrong = [
    !sameQuantity(answer.nonce, proven.nonce) && `nonce ${answer.nonce} (proven ${proven.nonce})`,
    !sameQuantity(answer.balance, proven.balance) && `balance ${answer.balance} (proven ${proven.balance})`,
    !sameHash(answer.codeHash, proven.codeHash) && `codeHash ${answer.codeHash} (proven ${proven.codeHash})`,
    !sameHash(answer.storageHash, proven.storageHash) &&
      `storageHash ${answer.storageHash} (proven ${proven.storageHash})`,
  ].filter((claim): claim is string => typeof claim === 'string');
  if (wrong.length > 0) refute('account-proof', `the answer says ${wrong.join(', ')}`, where);
}

async function proveSlot(answer: RpcProof, slot: Hex, storageHash: Hex, where: { address: string }): Promise<bigint> {
  const entry = answer.storageProof.find((one) => storageSlotKey(one.key) === slot);
  if (entry === undefined) return refute('storage-proof', `no proof for slot ${slot}`, { ...where, field: slot });
  let value = 0n;
  if (!sameHex(storageHash, EMPTY_STORAGE_HASH)) {
    const leaf = await walk(storageHash, dataBytes(slot), entry.proof);
    if (leaf === undefined)
      refute('storage-proof', `the proof of slot ${slot} does not walk from ${storageHash}`, where);
    if (leaf !== null) {
      const decoded = RLP.decode(leaf);
      if (!(decoded instanceof Uint8Array)) refute('storage-proof', `slot ${slot} holds no value`, where);
      value = bytesToBigInt(decoded);
    }
  }
  if (!sameQuantity(entry.value, value)) {
    refute('storage-proof', `the answer says slot ${slot} = ${entry.value}, the proof ${quantityHex(value)}`, {
      ...where,
      field: slot,
    });
  }
  return value;
}

/** Proves an eth_getProof answer for `address` (and `slots`) against `stateRoot`; throwing style. */
export async function proveAccount(
  stateRoot: string,
  address: string,
  answer: unknown,
  slots: readonly string[] = [],
): Promise<ProvenAccount> {
  const where = { address: address.toLowerCase() };
  const proof = parseShape(proofShape, answer, 'eth_getProof answer', where);
  if (!sameHex(proof.address, address)) refute('account-proof', `the proof is for ${proof.address}`, where);
  const leaf = await walk(stateRoot, dataBytes(address), proof.accountProof);
  if (leaf === undefined) return refute('account-proof', `the account proof does not walk from ${stateRoot}`, where);
  const exists = leaf !== null;
  const fields = exists ? decodeAccount(leaf, where) : ABSENT;
  checkClaims(proof, fields, exists, where);
  const storage = new Map<Hex, bigint>();
  for (const slot of slots.map(storageSlotKey)) {
    storage.set(slot, await proveSlot(proof, slot, fields.storageHash, where));
  }
  return { address: where.address as Hex, exists, ...fields, storage };
}

/** Proves an eth_getProof answer; a result instead of a throw. */
export function verifyAccountProof(
  stateRoot: string,
  address: string,
  answer: unknown,
  slots: readonly string[] = [],
): Promise<Verified<ProvenAccount>> {
  return settle(() => proveAccount(stateRoot, address, answer, slots));
}

/** Proves an eth_getCode answer against the proven code hash; returns the code. */
export function proveCode(answer: unknown, codeHash: string, address?: string): Uint8Array {
  const where = address === undefined ? {} : { address: address.toLowerCase() };
  if (typeof answer !== 'string' || !/^0x(?:[0-9a-fA-F]{2})*$/.test(answer)) {
    return refute('answer-shape', 'eth_getCode answer is not hex bytes', where);
  }
  const code = dataBytes(answer);
  const hash = toHex(keccak(code));
  if (!sameHex(hash, codeHash))
    refute('code-hash', `the code hashes to ${hash}, the proven code hash is ${codeHash}`, where);
  return code;
}

export function verifyCode(answer: unknown, codeHash: string, address?: string): Promise<Verified<Uint8Array>> {
  return settle(() => proveCode(answer, codeHash, address));
}
