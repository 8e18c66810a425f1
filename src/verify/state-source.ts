/**
 * Where local execution gets state: the `ProvenStateSource` port. Every value it returns is proven
 * against one trusted header; execution (execute.ts) reads nothing else.
 *
 * The gateway implements it — asking origins with failover, counting failures — usually by wrapping
 * `createProofReader`, which does the proving: `eth_getProof` at the header's number verified against its
 * `stateRoot` (proofs.ts), `eth_getCode` verified against the proven code hash, and BLOCKHASH answered
 * from the parent hash or the caller's trusted hashes. A reader throws `VerificationError` when an answer
 * does not verify (the caller's cue to try another origin) and whatever its `call` throws otherwise.
 * Each reader counts the origin calls it made (`calls`), the cost docs/verification.md reports.
 */
import { type Hex, quantityHex, sameHex } from './encoding.js';
import { refute } from './failure.js';
import type { TrustedHeader } from './header.js';
import { EMPTY_CODE_HASH, type ProvenAccount, proveAccount, proveCode, storageSlotKey } from './proofs.js';

export interface ProvenStateSource {
  /** The account at the trusted block with `slots` of its storage, proven. */
  account(address: Hex, slots: readonly Hex[]): Promise<ProvenAccount>;
  /** The code whose keccak is `codeHash` (the account's proven code hash). */
  code(address: Hex, codeHash: Hex): Promise<Uint8Array>;
  /** The trusted hash of block `number` (BLOCKHASH; within the 256 blocks before the trusted one). */
  blockHash(number: bigint): Promise<Hex>;
}

/** One JSON-RPC call to an origin: resolves to its `result`, throws for an error answer or a failed call. */
export type OriginCall = (method: string, params: readonly unknown[]) => Promise<unknown>;

export interface ProofReaderOptions {
  readonly call: OriginCall;
  readonly header: TrustedHeader;
  /** Trusted hashes of earlier blocks (the chain tracker's window); the parent's comes from the header. */
  readonly trustedBlockHash?: (number: bigint) => string | undefined | Promise<string | undefined>;
}

export interface ProofReader extends ProvenStateSource {
  /** Origin calls made so far (eth_getProof + eth_getCode). */
  readonly calls: number;
}

export function createProofReader(options: ProofReaderOptions): ProofReader {
  const { call, header } = options;
  const block = quantityHex(header.number);
  let calls = 0;
  const ask = (method: string, params: readonly unknown[]) => {
    calls += 1;
    return call(method, params);
  };
  return {
    get calls() {
      return calls;
    },
    async account(address, slots) {
      // 32-byte keys: anvil refuses `0x0`-style keys, and every client accepts these.
      const keys = slots.map(storageSlotKey);
      const answer = await ask('eth_getProof', [address, keys, block]);
      return proveAccount(header.stateRoot, address, answer, keys);
    },
    async code(address, codeHash) {
      if (sameHex(codeHash, EMPTY_CODE_HASH)) return new Uint8Array(0);
      return proveCode(await ask('eth_getCode', [address, block]), codeHash, address);
    },
    async blockHash(number) {
      if (number === header.number - 1n) return header.parentHash;
      const hash = await options.trustedBlockHash?.(number);
      if (hash === undefined) return refute('execution', `BLOCKHASH(${number}) needs a trusted hash of that block`);
      return hash as Hex;
    },
  };
}
