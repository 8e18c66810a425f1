/**
 * Ways to lie about an answer, for the verification tests: a header field off by one byte, a trie node
 * with one byte flipped (a value edited without fixing the trie), and an origin whose answers a `Lie`
 * rewrites on their way to the verifiers; for a lying origin in front of a gateway, `GATEWAY_LIES` (one
 * per kind of answer) and `slotLie` (one storage slot of one contract).
 */
import type { OriginCall } from '../../src/verify/state-source.js';
import { call } from './devnet-chain.js';
import type { Lie as OriginLie } from './lying-origin.js';

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

// ── Lies for a lying origin in front of a gateway (lying-origin.ts), SPEC §18 ──

type Json = Record<string, unknown>;
const plusOne = (value: unknown) => offByOneByte(String(value), 'number');
const byteOff = (value: unknown) => offByOneByte(String(value), 'data');
const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object';

/** The lie for each state method and for eth_getProof (`proof`: the proof's answer as the liar tells it). */
function stateLie(method: string, proof: (answer: Json) => Json): OriginLie {
  return ({ method: asked }, result) => {
    if (asked === method) return { result: method === 'eth_getCode' ? byteOff(result) : plusOne(result) };
    if (asked === 'eth_getProof' && isObject(result)) return { result: proof(result) };
    return undefined;
  };
}

/**
 * A block asked by hash or number — not by tag: the chain tracker's head polls (`latest`) stay honest, so
 * the liar is not refused as a head source (SPEC §20) and its lies reach the answer checks.
 */
const blockAsked = (method: string, params: readonly unknown[]) =>
  method === 'eth_getBlockByHash' || (method === 'eth_getBlockByNumber' && /^0x/.test(String(params[0])));

const withBalance = (answer: Json): Json => ({ ...answer, balance: plusOne(answer.balance) });

/**
 * Every lie the gateway tests tell, by name: each alters what one kind of call answers, in the origin's
 * own answer and in the answers that would prove it (eth_getProof), never fixing the trie or the hashes.
 */
export const GATEWAY_LIES: Readonly<Record<string, OriginLie>> = {
  balance: stateLie('eth_getBalance', withBalance),
  nonce: stateLie('eth_getTransactionCount', (a) => ({ ...a, nonce: plusOne(a.nonce) })),
  code: ({ method }, result) => (method === 'eth_getCode' ? { result: byteOff(result) } : undefined),
  storage: ({ method }, result) => {
    if (method === 'eth_getStorageAt') return { result: byteOff(result) };
    if (method !== 'eth_getProof' || !isObject(result) || !Array.isArray(result.storageProof)) return undefined;
    const storageProof = result.storageProof.map((entry: Json) => ({ ...entry, value: plusOne(entry.value) }));
    return { result: { ...result, storageProof } };
  },
  'proof nodes swapped': stateLie('eth_getBalance', (a) => {
    const nodes = [...(a.accountProof as string[])];
    [nodes[0], nodes[nodes.length - 1]] = [nodes.at(-1) as string, nodes[0] as string];
    return { ...withBalance(a), accountProof: nodes };
  }),
  'proof node flipped': stateLie('eth_getBalance', (a) => {
    const nodes = [...(a.accountProof as string[])];
    nodes[nodes.length - 1] = flippedNode(nodes.at(-1) as string);
    return { ...withBalance(a), accountProof: nodes };
  }),
  'block fields': ({ method, params }, result) =>
    blockAsked(method, params) && isObject(result)
      ? { result: { ...result, miner: byteOff(result.miner) } }
      : undefined,
  transactions: ({ method, params }, result) => {
    if (!blockAsked(method, params) || params[1] !== true || !isObject(result)) return undefined;
    const [first, ...rest] = result.transactions as Json[];
    if (first === undefined) return undefined;
    return { result: { ...result, transactions: [{ ...first, value: plusOne(first.value) }, ...rest] } };
  },
  receipts: ({ method }, result) => {
    if (method === 'eth_getTransactionReceipt' && isObject(result))
      return { result: { ...result, gasUsed: plusOne(result.gasUsed) } };
    if (method !== 'eth_getBlockReceipts' || !Array.isArray(result) || result.length === 0) return undefined;
    const [first, ...rest] = result as Json[];
    return { result: [{ ...first, cumulativeGasUsed: plusOne(first?.cumulativeGasUsed) }, ...rest] };
  },
  logs: ({ method }, result) => {
    if (method !== 'eth_getLogs' || !Array.isArray(result) || result.length === 0) return undefined;
    const [first, ...rest] = result as Json[];
    return { result: [{ ...first, data: byteOff(first?.data) }, ...rest] };
  },
  'eth_call result': ({ method }, result) => (method === 'eth_call' ? { result: byteOff(result) } : undefined),
};

/** A lie about one storage slot of one contract (`slot`: the key as eth_getProof names it), or its balance. */
export function slotLie(address: string, slot: bigint | 'balance'): OriginLie {
  return ({ method, params }, result) => {
    if (method !== 'eth_getProof' || !isObject(result)) return undefined;
    if (String(params[0]).toLowerCase() !== address.toLowerCase()) return undefined;
    if (slot === 'balance') return { result: withBalance(result) };
    const storageProof = (result.storageProof as Json[]).map((entry) =>
      BigInt(String(entry.key)) === slot ? { ...entry, value: plusOne(entry.value) } : entry,
    );
    return { result: { ...result, storageProof } };
  };
}
