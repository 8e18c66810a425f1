/**
 * What each verified check (block-checks.ts, state-checks.ts, logs-check.ts, execution-check.ts) works
 * with on one attempt, and what it may throw besides a VerificationError (the answer failed: the origin
 * is struck) and the attempt's own failures: `Unanchored` (no trusted block to check against: -32050, no
 * origin blamed), `Unprovable` (this call cannot be proven after all: it is forwarded as before and its
 * answer says `none`). `answerOf` makes the answer the gateway computed or proved itself (a balance from a
 * proof, a local eth_call) into a reply shaped like an origin's, with our ask id in place.
 */
import type { Candidate } from '../../../routing/router.js';
import { VerificationError, type Verified } from '../../../verify/index.js';
import type { UpstreamReply, VerifyLevel, VerifyMode } from '../../rpc/forwarder.js';
import type { RpcCall } from '../../rpc/request.js';
import { answerParts } from '../origin-answer.js';
import { type BlockTarget, type TargetChain, targetParam } from './block-target.js';
import { ASK_ID, type OriginAsk, resultOf } from './origin-ask.js';
import type { ProvenBlocks } from './proven-blocks.js';

export interface CheckContext {
  readonly network: string;
  readonly call: RpcCall;
  /** The call's params as they go to the origin (a tag resolved to the target's number). */
  readonly params: readonly unknown[];
  /** The block the call is checked at (none for lookups by hash: block, receipt). */
  readonly target: BlockTarget | undefined;
  readonly mode: Exclude<VerifyMode, 'off'>;
  /** What a check that passes proves. */
  readonly level: VerifyLevel;
  readonly ask: OriginAsk;
  readonly blocks: ProvenBlocks;
  readonly chain: TargetChain;
  readonly chainId: bigint;
  /** The call as it goes to the origin, with ASK_ID as its id. */
  readonly wire: Buffer;
}

export type Check = (context: CheckContext) => Promise<UpstreamReply>;

/** No trusted block to check the answer against (`asked`: the block, for the client's message). */
export class Unanchored extends Error {
  override readonly name = 'Unanchored';

  constructor(readonly asked: string) {
    super(`no trusted block for ${asked}`);
  }
}

/** The call cannot be proven after all (see the header). */
export class Unprovable extends Error {
  override readonly name = 'Unprovable';
}

/** The origin's answer to the client's call, and its result when there is one to prove (else null). */
export async function answered(context: CheckContext): Promise<{ reply: UpstreamReply; value: unknown }> {
  const reply = await context.ask.forward(context.wire);
  const value = reply.outcome?.key === 'result' ? resultOf(reply) : null;
  return { reply, value };
}

/** The value of a passed check; a failed one is thrown. */
export function proven<T>(verified: Verified<T>): T {
  if (!verified.ok) throw new VerificationError(verified.failure);
  return verified.value;
}

/** An answer the gateway made (see the header), from the attempt's origin as far as routing goes. */
export function answerOf(
  outcome: { readonly result: unknown } | { readonly error: unknown },
  candidate: Candidate,
  level: VerifyLevel,
): UpstreamReply {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: Number(ASK_ID), ...outcome }));
  const parts = answerParts(body, ASK_ID);
  return {
    body,
    id: parts?.id,
    pool: candidate.pool.name,
    origin: candidate.origin.name,
    ...(parts === undefined ? {} : { outcome: parts.outcome }),
    verified: level,
  };
}

/** A quantity as JSON-RPC writes it. */
export function quantity(value: bigint): string {
  return `0x${value.toString(16)}`;
}

/** The block the call is checked at; a call without one cannot be proven here. */
export function targetOf(context: CheckContext): BlockTarget {
  if (context.target === undefined) throw new Unprovable('no block to check at');
  return context.target;
}

/** The target as a block parameter of our own calls: its number (a hash target: its hash). */
export function atTarget(context: CheckContext): string {
  return targetParam(targetOf(context));
}
