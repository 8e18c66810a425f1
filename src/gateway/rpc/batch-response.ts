/**
 * A batch's HTTP answer from its elements' answers, in request order: a JSON array of the answers
 * present (notifications have none), 204 with no body when none is present. The status is 200, except
 * when every answer is an upstream error (no healthy origin, failed, timed out): then the first one's
 * (503/502/504), so a load balancer sees an outage as one.
 */
import type { SwitchyardError } from '../../errors/base.js';

/**
 * One element's answer in a batch response (undefined: a notification, which gets no element); `error`
 * when the gateway answered it with an error, `failed` when the origin did. `id`: the span in `body` of
 * the origin's id, to be replaced by the client's raw id bytes `clientId` as the answer is written (one
 * copy into the response, instead of a spliced copy per element and another to join them).
 */
export type BatchAnswer =
  | {
      body: Buffer;
      error?: SwitchyardError;
      failed?: boolean;
      id?: { start: number; end: number } | undefined;
      clientId?: Buffer;
    }
  | undefined;

const UPSTREAM_CODES = new Set(['NO_HEALTHY_ORIGIN', 'UPSTREAM_FAILED', 'UPSTREAM_TIMEOUT']);
const OPEN = 0x5b;
const COMMA = 0x2c;
const CLOSE = 0x5d;

type Present = NonNullable<BatchAnswer>;

export function batchResponse(answers: readonly BatchAnswer[]): { status: number; body: Buffer | undefined } {
  const present = answers.filter((answer): answer is Present => answer !== undefined);
  if (present.length === 0) return { status: 204, body: undefined };
  let length = present.length + 1; // brackets and commas
  for (const answer of present) length += answerLength(answer);
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  out[at++] = OPEN;
  present.forEach((answer, i) => {
    if (i > 0) out[at++] = COMMA;
    at = writeAnswer(out, at, answer);
  });
  out[at] = CLOSE;
  const first = present[0]?.error;
  const allUpstream = present.every((answer) => answer.error !== undefined && UPSTREAM_CODES.has(answer.error.code));
  return { status: allUpstream && first ? first.httpStatus : 200, body: out };
}

function answerLength({ body, id, clientId }: Present): number {
  return id === undefined || clientId === undefined ? body.length : body.length - (id.end - id.start) + clientId.length;
}

/** Writes one answer at `at` (the client's id in place of the origin's); answers the offset after it. */
function writeAnswer(out: Buffer, at: number, { body, id, clientId }: Present): number {
  if (id === undefined || clientId === undefined) return at + copy(body, 0, body.length, out, at);
  at += copy(body, 0, id.start, out, at);
  at += copy(clientId, 0, clientId.length, out, at);
  return at + copy(body, id.end, body.length, out, at);
}

/** Pieces below this many bytes are copied byte by byte: cheaper than Buffer#copy's call for a few bytes. */
const SMALL = 64;

function copy(from: Buffer, start: number, end: number, out: Buffer, at: number): number {
  const n = end - start;
  if (n < SMALL) for (let k = 0; k < n; k += 1) out[at + k] = from[start + k] as number;
  else from.copy(out, at, start, end);
  return n;
}
