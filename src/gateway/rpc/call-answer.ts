/**
 * One call's answer for the client, made from the origin's reply: the reply's body with the client's
 * raw id spliced in (id-splice.ts). A large answer still arriving from the origin (origin-forwarder.ts,
 * streaming) is its first bytes and a stream of the rest, its announced length corrected for the id's.
 * A notification has no answer: a stream its reply brought is destroyed.
 */
import type { Readable } from 'node:stream';
import type { UpstreamReply, VerifyLevel } from './forwarder.js';
import { splice } from './id-splice.js';
import type { RpcCall } from './request.js';

/** One call's answer for the client: whole, or its first bytes and a stream of the rest. */
export interface CallAnswer {
  body: Buffer;
  rest?: Readable;
  length?: number;
  /** The origin answered with a JSON-RPC `error`. */
  failed?: boolean;
  /** What verification proved of it (SPEC §18); absent: nothing. */
  verified?: VerifyLevel | undefined;
}

/** The client's answer to `call` from `reply`, or undefined for a notification. */
export function callAnswer(call: RpcCall, reply: UpstreamReply): CallAnswer | undefined {
  if (call.id === undefined || reply.id === undefined) {
    reply.rest?.destroy();
    return undefined;
  }
  const body = splice(reply as UpstreamReply & { id: { start: number; end: number } }, call);
  if (reply.rest === undefined) return { body, failed: reply.outcome?.key === 'error', verified: reply.verified };
  if (reply.length === undefined) return { body, rest: reply.rest };
  const length = reply.length - (reply.id.end - reply.id.start) + call.idBytes.length;
  return { body, rest: reply.rest, length };
}
