/**
 * What the handler (handler.ts) gives the HTTP edge and the WebSocket connection for one request body,
 * and what one call's answer is on its way there: whole, or its first bytes and a stream of the rest.
 */
import type { Readable } from 'node:stream';

/** The answer to one request body. */
export interface HttpAnswer {
  status: number;
  /** The answer; with `rest`, its first bytes (the client's id already in place). */
  body: Buffer | undefined;
  headers: Readonly<Record<string, string>>;
  /** A large single answer still arriving from the origin (origin-forwarder.ts, streaming): send after `body`. */
  rest?: Readable;
  /** Total length of `body` + `rest`, when the origin announced its length. */
  length?: number;
}

/** One call's answer for the client: whole, or its first bytes and a stream of the rest. */
export interface CallAnswer {
  body: Buffer;
  rest?: Readable;
  length?: number;
  /** The origin answered with a JSON-RPC `error`. */
  failed?: boolean;
}
