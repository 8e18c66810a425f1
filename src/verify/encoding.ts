/**
 * The byte-level vocabulary of the checks: hex ⇄ bytes, quantities as RLP integers (big-endian, no
 * leading zeros, 0 = empty), keccak-256, and the root of an ordered trie (transactions, receipts and
 * withdrawals are each a Merkle-Patricia trie keyed by RLP(index)). Bytes and tries come from the
 * ethereumjs libraries; keccak from @noble/hashes, the hash those libraries use.
 */
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes, bytesToHex, hexToBytes } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';

export type Hex = `0x${string}`;

export function dataBytes(hex: string): Uint8Array {
  return hexToBytes(hex as Hex);
}

/** A hex quantity as an RLP integer. */
export function quantityBytes(hex: string): Uint8Array {
  return bigIntToUnpaddedBytes(BigInt(hex));
}

export function toHex(bytes: Uint8Array): Hex {
  return bytesToHex(bytes) as Hex;
}

/** The canonical JSON-RPC quantity (`0x0`, `0x1a`, …). */
export function quantityHex(value: bigint): Hex {
  return `0x${value.toString(16)}`;
}

export function keccak(bytes: Uint8Array): Uint8Array {
  return keccak_256(bytes);
}

/** Same bytes, whatever the hex case (addresses come checksummed from some clients). */
export function sameHex(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Same quantity, whatever the leading zeros. */
export function sameQuantity(a: string, b: string | bigint): boolean {
  return BigInt(a) === BigInt(b);
}

/** Whether a JSON value states `expected`: a hex quantity, or a plain number (anvil writes some timestamps so). */
export function statesQuantity(value: unknown, expected: bigint): boolean {
  if (typeof value === 'string') return /^0x[0-9a-fA-F]{1,64}$/.test(value) && BigInt(value) === expected;
  return typeof value === 'number' && Number.isSafeInteger(value) && BigInt(value) === expected;
}

/** The root of the trie mapping RLP(i) to `values[i]`: transactions, receipts and withdrawals roots. */
export async function orderedTrieRoot(values: readonly Uint8Array[]): Promise<Hex> {
  const trie = new MerklePatriciaTrie();
  for (const [index, value] of values.entries()) await trie.put(RLP.encode(index), value);
  return toHex(trie.root());
}
