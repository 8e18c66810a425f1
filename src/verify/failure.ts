/**
 * What a verification concluded. Every check of `verify/` either proves an answer (and returns what it
 * proved) or says which check did not hold, in one shape the gateway can count, log and alert on:
 *
 * - `Verified<T>`: `{ ok: true, value }` or `{ ok: false, failure }`. Public checks return it and never
 *   throw for a lying or malformed answer; they throw only for programming errors (a bug here).
 * - `VerifyFailure.check` names the check (stable strings, listed in docs/verification.md); `reason` says
 *   in one sentence what did not hold; `block`, `address` and `field` locate it when known.
 * - `VerificationError` carries a failure through code that throws (the EVM's state reads, the proof
 *   reader): `settle()` turns it back into a `Verified`.
 */

/** The checks, one name each (metrics label values and log fields use these strings). */
export type VerifyCheck =
  /** The answer is not the JSON-RPC object it should be (missing field, not hex, wrong length). */
  | 'answer-shape'
  /** The header fields do not form a known layout (a gap, or a field of a fork after Prague). */
  | 'header-layout'
  /** The header fields do not hash to the answered hash or to the trusted hash. */
  | 'header-hash'
  /** A field of a block answer outside the header that the block determines (`size`) is wrong. */
  | 'block-field'
  | 'transactions-root'
  /** A transaction object's field that the root does not cover (hash, from, position, …) is wrong. */
  | 'transaction'
  | 'withdrawals-root'
  | 'uncles-hash'
  | 'receipts-root'
  /** A receipt's field that the root does not cover (gasUsed, position, log indexes, …) is wrong. */
  | 'receipt'
  /** A log names a block that is not the trusted block at its height, or differs from the proven receipt. */
  | 'log'
  | 'account-proof'
  | 'storage-proof'
  | 'code-hash'
  /** Local execution could not run the call over proven state (a feature it cannot prove, see the docs). */
  | 'execution';

export interface VerifyFailure {
  readonly check: VerifyCheck;
  readonly reason: string;
  readonly block?: bigint;
  readonly address?: string;
  readonly field?: string;
}

export type Verified<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly failure: VerifyFailure };

export class VerificationError extends Error {
  override readonly name = 'VerificationError';
  readonly failure: VerifyFailure;

  constructor(failure: VerifyFailure, options?: { cause?: unknown }) {
    super(`${failure.check}: ${failure.reason}`, options);
    this.failure = failure;
  }
}

export function isVerificationError(err: unknown): err is VerificationError {
  return err instanceof VerificationError;
}

/** Throws the failure of one check (the internal style; `settle` turns it into a result). */
export function refute(check: VerifyCheck, reason: string, where: Omit<VerifyFailure, 'check' | 'reason'> = {}): never {
  throw new VerificationError({ check, reason, ...where });
}

/** Runs a check written in the throwing style and returns its result; other errors propagate. */
export async function settle<T>(run: () => T | Promise<T>): Promise<Verified<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (err) {
    if (isVerificationError(err)) return { ok: false, failure: err.failure };
    throw err;
  }
}
