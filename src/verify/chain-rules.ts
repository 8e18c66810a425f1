/**
 * The ethereumjs `Common` objects the checks need (chain id + fork rules), kept per chain id.
 *
 * - Decoding transactions uses Prague rules: every transaction type through EIP-7702 is known, and no
 *   Osaka rule refuses a historical transaction (EIP-7825's gas cap). A transaction's chain id comes from
 *   the transaction itself (typed: `chainId`; legacy: EIP-155 `v`; before EIP-155: any, here 1).
 * - Executing calls uses the fork the caller names (execute.ts chooses it from the header).
 * - Blob contents are never checked here (answers carry no blobs), but ethereumjs will not build a blob
 *   transaction without a KZG implementation: `NO_KZG` stands in and refuses every use (local execution
 *   replaces the point-evaluation precompile, execution-context.ts).
 * At most `MAX_CACHED` chain ids are kept per fork (a gateway serves a handful of networks); past that the
 * cache starts over.
 */
import { type Common, createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common';
import { paramsTx } from '@ethereumjs/tx';
import type { KZG } from '@ethereumjs/util';

const MAX_CACHED = 64;
const cache = new Map<string, Common>();

export const KZG_UNAVAILABLE =
  'KZG is not available here: blob contents and the point-evaluation precompile are not proven';

function noKzg(): never {
  throw new Error(KZG_UNAVAILABLE);
}

const NO_KZG: KZG = {
  blobToKzgCommitment: noKzg,
  computeBlobProof: noKzg,
  verifyProof: noKzg,
  verifyBlobProofBatch: noKzg,
  computeCells: noKzg,
  computeCellsAndProofs: noKzg,
  recoverCellsAndProofs: noKzg,
  verifyCellKzgProofBatch: noKzg,
};

/** The Common of `chainId` under `hardfork`'s rules. */
export function chainCommon(chainId: bigint, hardfork: Hardfork = Hardfork.Prague): Common {
  const key = `${chainId}:${hardfork}`;
  let common = cache.get(key);
  if (common === undefined) {
    if (cache.size >= MAX_CACHED) cache.clear();
    common = createCustomCommon({ chainId: chainId.toString() }, Mainnet, { hardfork, customCrypto: { kzg: NO_KZG } });
    cache.set(key, common);
  }
  return common;
}

/** The chain id a legacy transaction's `v` commits to (EIP-155), or undefined before EIP-155. */
export function legacyChainId(v: bigint): bigint | undefined {
  return v >= 35n ? (v - 35n) / 2n : undefined;
}

/** EIP-7825's per-transaction gas limit where `common`'s fork has it (Osaka on), else undefined. */
export function transactionGasCap(common: Common): bigint | undefined {
  if (!common.isActivatedEIP(7825)) return undefined;
  const cap = paramsTx[7825]?.maxTransactionGasLimit;
  return cap === undefined || cap === null ? undefined : BigInt(cap);
}
