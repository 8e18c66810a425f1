/**
 * Method hooks (STYLE.md 10: a special method's behaviour behind a named hook, one file per method, so
 * the forwarding pipeline never names a method). The origin forwarder (origin-forwarder.ts) looks a
 * call's method up in `methodHooks` (registry.ts); a hook that claims the call forwards it its own way, but every
 * upstream call it makes goes through the same failsafe engine (`HookUpstream`: plans, rules, failover,
 * throttling, scores, health), so nothing a hook does bypasses routing.
 *   - eth_getLogs (eth-get-logs.ts): `networks.{name}.logs_split` — a wide range asked in chunks across
 *     origins and merged into the answer one origin would give;
 *   - eth_sendRawTransaction (eth-send-raw-transaction.ts): `networks.{name}.send_transactions`, an
 *     origin's "already known" for a transaction it has answered as success, and the resend memory.
 * A hook reads its network's settings at call time (`settings`), never captured: a reloaded config
 * applies to the next call.
 */
import type { Clock } from '../../../clock.js';
import type { NetworkConfig } from '../../../config/schema.js';
import type { Logger } from '../../../log.js';
import type { Candidate } from '../../../routing/router.js';
import type { UpstreamReply, UpstreamRequest } from '../../rpc/forwarder.js';
import type { StreamSlots } from '../stream-slots.js';

/** An answer the engine accepted (or passed through), and the origin it came from. */
export interface CalledAnswer {
  readonly reply: UpstreamReply;
  readonly candidate: Candidate;
}

/** What a hook may do upstream: calls through the failsafe engine, and what routing knows. */
export interface HookUpstream {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Per-client stream slots (gateway.max_streams_per_client), for an answer a hook streams. */
  readonly streamSlots: StreamSlots | undefined;
  /** An answer past this many bytes may stream (origin-forwarder.ts STREAM_AFTER_BYTES). */
  readonly streamAfter: number;
  /** The network's settings as configured now. */
  settings(network: string): Partial<NetworkConfig> | undefined;
  /** The (adopted) network head, when the chain tracker knows it. */
  networkHead(network: string): number | undefined;
  /** One call with its own plan (the usual path: read-your-writes recorded for an accepted write). */
  call(request: UpstreamRequest): Promise<CalledAnswer>;
  /** One call to `candidate` alone (one attempt, the engine's rules); records no read-your-writes. */
  callOn(request: UpstreamRequest, candidate: Candidate): Promise<CalledAnswer>;
  /** Every origin of the request's network that takes traffic now (router.ts `plan`); throws as it does. */
  origins(request: UpstreamRequest): readonly Candidate[];
  /** Read-your-writes: the client's pending-state reads go first to `candidate` (write-affinity.ts). */
  stick(request: UpstreamRequest, candidate: Candidate): void;
}

export interface MethodHook {
  /** Whether this hook forwards the call (else the usual path); cheap, no I/O. */
  claims(request: Pick<UpstreamRequest, 'network' | 'call'>): boolean;
  /** Forwards a call it claims; resolves the client's answer, or rejects with the client's error. */
  forward(request: UpstreamRequest): Promise<UpstreamReply>;
}
