/**
 * `X-Switchyard-Verified` (SPEC §18): what verification proved of an HTTP answer — `proof` (every value
 * proven from Merkle proofs or computed locally over proven state), `integrity` (hashes and roots
 * checked against trusted blocks) or `none` (not checked: the method has no check in its mode, or the
 * answer is an error, -32050 included). A batch carries the weakest of its answers. The header is present
 * when at least one call of the request falls under a `verify` mode other than `off` (the network's, or
 * its method's); with every call `off` it is absent. Bodies are never touched.
 */
import type { BatchAnswer } from './batch-response.js';
import type { Forwarder, VerifyLevel } from './forwarder.js';
import type { Element } from './request.js';

export const VERIFIED_HEADER = 'x-switchyard-verified';

const RANK: Readonly<Record<VerifyLevel, number>> = { none: 0, integrity: 1, proof: 2 };

/** The weaker of two levels (undefined: no call under verify yet). */
export function weaker(a: VerifyLevel | undefined, b: VerifyLevel): VerifyLevel {
  return a === undefined || RANK[b] < RANK[a] ? b : a;
}

/** Whether a call of `method` on `network` is under a verify mode (the header is then due). */
export function underVerify(forwarder: Forwarder, network: string, method: string): boolean {
  const mode = forwarder.verifyMode?.(network, method).mode;
  return mode !== undefined && mode !== 'off';
}

/** `headers` with the verified header added when `level` is set. */
export function withVerified(
  headers: Readonly<Record<string, string>>,
  level: VerifyLevel | undefined,
): Readonly<Record<string, string>> {
  return level === undefined ? headers : { ...headers, [VERIFIED_HEADER]: level };
}

/** A single call's headers: `level` (none when absent) when the call is under verify. */
export function callHeaders(
  forwarder: Forwarder,
  headers: Readonly<Record<string, string>>,
  network: string,
  method: string,
  level?: VerifyLevel,
): Readonly<Record<string, string>> {
  return underVerify(forwarder, network, method) ? withVerified(headers, level ?? 'none') : headers;
}

/** A batch's headers: the weakest of its answers, when one of its calls is under verify. */
export function batchHeaders(
  { forwarder }: { readonly forwarder: Forwarder },
  network: string,
  headers: Readonly<Record<string, string>>,
  elements: readonly Element[],
  answers: readonly BatchAnswer[] = [],
): Readonly<Record<string, string>> {
  if (!elements.some((e) => e.ok && underVerify(forwarder, network, e.call.method))) return headers;
  let level: VerifyLevel | undefined;
  for (const answer of answers) if (answer !== undefined) level = weaker(level, answer.verified ?? 'none');
  return withVerified(headers, level ?? 'none');
}
