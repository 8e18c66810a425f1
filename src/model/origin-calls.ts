/**
 * A port for asking one origin JSON-RPC calls outside client traffic (the transaction ledger's block and
 * mempool lookups and rebroadcasts, SPEC §19). The gateway implements it over origin clients of their
 * own, under the routing account's outbound rules (gateway/upstream/origin-calls.ts).
 */
import type { Origin } from './pool.js';

/** One call's answer: its `result`, or its JSON-RPC `error`. */
export type OriginCallAnswer = { readonly result: unknown } | { readonly error: unknown };

export type MethodCall = readonly [method: string, params: readonly unknown[]];

export interface OriginCalls {
  /**
   * Sends the calls to the origin (several as one batch) and resolves their answers in the calls' order.
   * Rejects when the origin could not be asked or its answer is not JSON-RPC for these calls.
   */
  call(origin: Origin, calls: readonly MethodCall[]): Promise<OriginCallAnswer[]>;
}
