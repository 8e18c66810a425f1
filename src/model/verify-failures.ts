/**
 * The port through which the gateway reports an origin whose answer failed verification (SPEC §18) to
 * whoever raises `switchyard_origin_integrity_alert` (incidents/integrity.ts): in one process the
 * incident detector; in a gateway worker a report to the control process, which hands it on.
 * `verifyFailuresOf` reads such reports back from IPC, dropping what is not well formed.
 */

/** One answer of one origin that did not verify. */
export interface VerifyFailureReport {
  readonly network: string;
  readonly poolId: string;
  readonly origin: string;
  readonly method: string;
  /** The block the answer was checked at, when known (a number, or a hash the client named). */
  readonly block?: number | string | undefined;
  /** What did not hold (verify/ VerifyCheck) and how. */
  readonly check: string;
  readonly reason: string;
}

export interface VerifyFailureSink {
  failed(report: VerifyFailureReport): void;
}

/** The reports in an IPC payload (an array of reports); anything not well formed is left out. */
export function verifyFailuresOf(payload: unknown): VerifyFailureReport[] {
  if (!Array.isArray(payload)) return [];
  return payload.filter(
    (row): row is VerifyFailureReport =>
      row !== null &&
      typeof row === 'object' &&
      ['network', 'poolId', 'origin', 'method', 'check', 'reason'].every(
        (key) => typeof (row as Record<string, unknown>)[key] === 'string',
      ) &&
      ['number', 'string', 'undefined'].includes(typeof (row as { block?: unknown }).block),
  );
}
