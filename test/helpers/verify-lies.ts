/**
 * Ways to lie about an answer, for the verification tests: a header field off by one byte, a trie node
 * with one byte flipped (a value edited without fixing the trie), and an origin whose answers a `Lie`
 * rewrites on their way to the verifiers.
 */
import type { OriginCall } from '../../src/verify/state-source.js';
import { call } from './devnet-chain.js';

/** The header fields of every layout through Prague, in RLP order. */
export const HEADER_FIELDS = [
  'parentHash',
  'sha3Uncles',
  'miner',
  'stateRoot',
  'transactionsRoot',
  'receiptsRoot',
  'logsBloom',
  'difficulty',
  'number',
  'gasLimit',
  'gasUsed',
  'timestamp',
  'extraData',
  'mixHash',
  'nonce',
  'baseFeePerGas',
  'withdrawalsRoot',
  'blobGasUsed',
  'excessBlobGas',
  'parentBeaconBlockRoot',
  'requestsHash',
] as const;

const QUANTITIES = new Set([
  'difficulty',
  'number',
  'gasLimit',
  'gasUsed',
  'timestamp',
  'baseFeePerGas',
  'blobGasUsed',
  'excessBlobGas',
]);

/** The field's value changed by one byte (quantities: +1; empty data: one byte added). */
export function offByOneByte(value: string, field: string): string {
  if (value === '0x') return '0x01';
  if (QUANTITIES.has(field)) return `0x${(BigInt(value) + 1n).toString(16)}`;
  const last = Number.parseInt(value.slice(-2), 16);
  return value.slice(0, -2) + ((last + 1) % 256).toString(16).padStart(2, '0');
}

/** Each header field present in `block`, with the block that has only that field altered. */
export function alteredHeaders(block: Record<string, unknown>): [string, Record<string, unknown>][] {
  return HEADER_FIELDS.filter((field) => typeof block[field] === 'string').map((field) => [
    field,
    { ...block, [field]: offByOneByte(block[field] as string, field) },
  ]);
}

/** The trie node with one byte in its middle flipped. */
export function flippedNode(node: string): string {
  const at = Math.floor(node.length / 2) & ~1;
  const byte = Number.parseInt(node.slice(at, at + 2), 16) ^ 0x01;
  return `${node.slice(0, at)}${byte.toString(16).padStart(2, '0')}${node.slice(at + 2)}`;
}

/** Rewrites an origin's `result` for one method call (a lying origin); returns the result unchanged otherwise. */
export type Lie = (method: string, params: readonly unknown[], result: unknown) => unknown;

/** The verifiers' `OriginCall` for a real node, with an optional lie applied to its answers. */
export function originCall(url: string, lie?: Lie): OriginCall {
  return async (method, params) => {
    const result = await call(url, method, [...params]);
    return lie === undefined ? result : lie(method, params, structuredClone(result));
  };
}
