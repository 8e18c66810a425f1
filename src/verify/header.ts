/**
 * Block header hashes recomputed from an `eth_getBlockByNumber` / `eth_getBlockByHash` answer (with or
 * without full transactions): keccak-256 of the RLP list of the header fields, in consensus order.
 *
 * The layout is chosen by the fields present, each fork appending fields to the one before:
 * - `legacy` (Frontier … Berlin): the 15 original fields;
 * - `london` (also Paris: difficulty 0, mixHash = prevRandao): + baseFeePerGas;
 * - `shanghai`: + withdrawalsRoot;
 * - `cancun`: + blobGasUsed, excessBlobGas, parentBeaconBlockRoot;
 * - `prague` (also Osaka and the BPO forks, same fields): + requestsHash.
 * Fields present out of that order (a gap) refute `header-layout`, and so do the header fields of a fork
 * after Osaka (blockAccessListHash, slotNumber), which no layout here covers: never a wrong hash.
 *
 * `verifyHeader` proves the answer's fields: they hash to the answer's own `hash` and, when given, to the
 * trusted hash and height. Its result (`TrustedHeader`) is what the receipts check and local execution
 * read. Fields of a block answer outside the header (`size`, `totalDifficulty`, the transaction and
 * uncle lists) are covered by `verifyBlock` (block.ts), or named there as uncovered.
 */
import { RLP } from '@ethereumjs/rlp';
import { dataBytes, type Hex, keccak, quantityBytes, sameHex, toHex } from './encoding.js';
import { refute, settle, type Verified } from './failure.js';
import { headerShape, parseShape, type RpcHeader } from './rpc-shapes.js';

export type HeaderLayout = 'legacy' | 'london' | 'shanghai' | 'cancun' | 'prague';

type FieldName = keyof RpcHeader & string;

/** The 15 fields every header has, in RLP order, and whether each is a quantity or raw bytes. */
const BASE_FIELDS: readonly (readonly [FieldName, 'bytes' | 'quantity'])[] = [
  ['parentHash', 'bytes'],
  ['sha3Uncles', 'bytes'],
  ['miner', 'bytes'],
  ['stateRoot', 'bytes'],
  ['transactionsRoot', 'bytes'],
  ['receiptsRoot', 'bytes'],
  ['logsBloom', 'bytes'],
  ['difficulty', 'quantity'],
  ['number', 'quantity'],
  ['gasLimit', 'quantity'],
  ['gasUsed', 'quantity'],
  ['timestamp', 'quantity'],
  ['extraData', 'bytes'],
  ['mixHash', 'bytes'],
  ['nonce', 'bytes'],
];

/** The fields each later fork appends, in RLP order. */
const FORK_FIELDS: readonly {
  readonly layout: HeaderLayout;
  readonly fields: readonly (readonly [FieldName, 'bytes' | 'quantity'])[];
}[] = [
  { layout: 'london', fields: [['baseFeePerGas', 'quantity']] },
  { layout: 'shanghai', fields: [['withdrawalsRoot', 'bytes']] },
  {
    layout: 'cancun',
    fields: [
      ['blobGasUsed', 'quantity'],
      ['excessBlobGas', 'quantity'],
      ['parentBeaconBlockRoot', 'bytes'],
    ],
  },
  { layout: 'prague', fields: [['requestsHash', 'bytes']] },
];

/** Header fields of forks after Osaka: their layout is not known here, so such headers are refused. */
const LATER_FIELDS = ['blockAccessListHash', 'slotNumber'];

/** A header whose fields are proven to hash to its `hash`. Quantities as bigint, bytes as hex. */
export interface TrustedHeader {
  readonly hash: Hex;
  readonly layout: HeaderLayout;
  readonly number: bigint;
  readonly parentHash: Hex;
  readonly stateRoot: Hex;
  readonly transactionsRoot: Hex;
  readonly receiptsRoot: Hex;
  readonly sha3Uncles: Hex;
  readonly logsBloom: Hex;
  readonly miner: Hex;
  readonly difficulty: bigint;
  readonly gasLimit: bigint;
  readonly gasUsed: bigint;
  readonly timestamp: bigint;
  /** prevRandao after the merge. */
  readonly mixHash: Hex;
  readonly baseFeePerGas?: bigint;
  readonly withdrawalsRoot?: Hex;
  readonly blobGasUsed?: bigint;
  readonly excessBlobGas?: bigint;
  readonly parentBeaconBlockRoot?: Hex;
  readonly requestsHash?: Hex;
}

export interface HeaderExpectation {
  /** The trusted hash of this block (from the anchor). */
  readonly hash?: string;
  /** The height asked for. */
  readonly number?: bigint;
}

/** The layout of `header`, or a `header-layout` refutation. */
export function headerLayout(header: RpcHeader | Record<string, unknown>): HeaderLayout {
  const later = LATER_FIELDS.filter((name) => header[name] !== undefined && header[name] !== null);
  if (later.length > 0) refute('header-layout', `fields of a fork after Osaka (${later.join(', ')}) are not supported`);
  let layout: HeaderLayout = 'legacy';
  let ended: string | undefined;
  for (const fork of FORK_FIELDS) {
    const present = fork.fields.filter(([name]) => header[name] !== undefined && header[name] !== null);
    if (present.length === 0) {
      ended ??= fork.layout;
      continue;
    }
    if (ended !== undefined || present.length !== fork.fields.length) {
      const missing = ended === undefined ? `the other ${fork.layout} fields` : `the ${ended} fields`;
      refute('header-layout', `${fork.layout} fields (${present.map(([name]) => name).join(', ')}) without ${missing}`);
    }
    layout = fork.layout;
  }
  return layout;
}

/** The RLP list of the header's fields in its layout. */
export function encodeHeader(header: RpcHeader): Uint8Array {
  const layout = headerLayout(header);
  const fields = [...BASE_FIELDS];
  for (const fork of layout === 'legacy' ? [] : FORK_FIELDS) {
    fields.push(...fork.fields);
    if (fork.layout === layout) break;
  }
  return RLP.encode(
    fields.map(([name, kind]) => {
      const value = header[name] as string;
      return kind === 'quantity' ? quantityBytes(value) : dataBytes(value);
    }),
  );
}

/** The hash the header's fields hash to (not the answer's `hash` field). */
export function computeBlockHash(header: RpcHeader): Hex {
  return toHex(keccak(encodeHeader(header)));
}

/** Parses and proves a header; throwing style, for the other checks of this folder. */
export function proveHeader(answer: unknown, expected: HeaderExpectation = {}): TrustedHeader {
  const header = parseShape(headerShape, answer, 'block header');
  const number = BigInt(header.number);
  if (expected.number !== undefined && number !== expected.number) {
    refute('header-hash', `block ${number} answered for block ${expected.number}`, { block: expected.number });
  }
  const computed = computeBlockHash(header);
  if (!sameHex(computed, header.hash)) {
    refute('header-hash', `the header fields hash to ${computed}, not to the answered ${header.hash}`, {
      block: number,
    });
  }
  if (expected.hash !== undefined && !sameHex(computed, expected.hash)) {
    refute('header-hash', `block ${number} hashes to ${computed}, not to the trusted ${expected.hash}`, {
      block: number,
    });
  }
  return trustedHeader(header, computed);
}

/** Proves a block answer's header: its fields hash to its `hash` and to the trusted hash when given. */
export function verifyHeader(answer: unknown, expected: HeaderExpectation = {}): Promise<Verified<TrustedHeader>> {
  return settle(() => proveHeader(answer, expected));
}

function trustedHeader(header: RpcHeader, hash: Hex): TrustedHeader {
  const optionalQuantity = (value: string | undefined) => (value === undefined ? undefined : BigInt(value));
  return {
    hash,
    layout: headerLayout(header),
    number: BigInt(header.number),
    parentHash: header.parentHash,
    stateRoot: header.stateRoot,
    transactionsRoot: header.transactionsRoot,
    receiptsRoot: header.receiptsRoot,
    sha3Uncles: header.sha3Uncles,
    logsBloom: header.logsBloom,
    miner: header.miner,
    difficulty: BigInt(header.difficulty),
    gasLimit: BigInt(header.gasLimit),
    gasUsed: BigInt(header.gasUsed),
    timestamp: BigInt(header.timestamp),
    mixHash: header.mixHash,
    baseFeePerGas: optionalQuantity(header.baseFeePerGas),
    withdrawalsRoot: header.withdrawalsRoot,
    blobGasUsed: optionalQuantity(header.blobGasUsed),
    excessBlobGas: optionalQuantity(header.excessBlobGas),
    parentBeaconBlockRoot: header.parentBeaconBlockRoot,
    requestsHash: header.requestsHash,
  };
}
