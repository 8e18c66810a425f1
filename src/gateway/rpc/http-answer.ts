/**
 * What the handler (handler.ts) gives the HTTP edge and the WebSocket connection for one request body
 * (one call's answer on its way there: call-answer.ts).
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
