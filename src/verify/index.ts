/**
 * The verification primitives (SPEC §18), pure logic over JSON-RPC answers; what each check proves and
 * costs is in docs/verification.md. The gateway wires them: it keeps trusted hashes (the anchor), asks
 * origins, and turns a `VerifyFailure` into a retry, a strike and, when nothing verifies, -32050.
 *
 * - Blocks: `verifyHeader` / `verifyBlock` (header hash for every layout through Prague, transactions,
 *   withdrawals and uncles roots, size) → `TrustedHeader`, `ProvenBlock`.
 * - Receipts and logs: `verifyBlockReceipts`, `verifyReceipt`, `checkLogBlocks`, `proveLogs`, `bloomMayMatch`.
 * - State: `verifyAccountProof` (eth_getProof against a stateRoot) → `ProvenAccount`; `verifyCode`.
 * - Execution: `executeCall`, `estimateGas` over a `ProvenStateSource` (the port), usually
 *   `createProofReader` around the gateway's own origin calls.
 * - Results: `Verified<T>` / `VerifyFailure` (failure.ts); throwing variants (`prove…`) refute with
 *   `VerificationError`.
 */

export { type ProvenBlock, proveUncles, verifyBlock } from './block.js';
export { type LocalCallAnswer, type LocalCallError, REVERT_CODE } from './call-answer.js';
export type { Hex } from './encoding.js';
export { type ExecutionContext, estimateGas, executeCall } from './execute.js';
export { executionFork } from './execution-context.js';
export {
  isVerificationError,
  VerificationError,
  type Verified,
  type VerifyCheck,
  type VerifyFailure,
} from './failure.js';
export {
  computeBlockHash,
  type HeaderExpectation,
  type HeaderLayout,
  proveHeader,
  type TrustedHeader,
  verifyHeader,
} from './header.js';
export {
  bloomMayMatch,
  checkLogBlocks,
  type LogBlockCheck,
  type LogSelector,
  logMatchesFilter,
  proveLogs,
} from './logs.js';
export {
  EMPTY_CODE_HASH,
  EMPTY_STORAGE_HASH,
  type ProvenAccount,
  proveAccount,
  proveCode,
  storageSlotKey,
  verifyAccountProof,
  verifyCode,
} from './proofs.js';
export type { StateRequest } from './proven-state.js';
export {
  type ProvenBlockReceipts,
  type ProvenReceipt,
  proveBlockReceipts,
  proveReceipt,
  verifyBlockReceipts,
  verifyReceipt,
} from './receipts.js';
export {
  createProofReader,
  type OriginCall,
  type ProofReader,
  type ProofReaderOptions,
  type ProvenStateSource,
} from './state-source.js';
export {
  type ProvenBlockTransactions,
  type ProvenTransaction,
  proveBlockTransactions,
  proveTransaction,
  verifyTransaction,
} from './transactions.js';
