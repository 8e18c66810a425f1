/**
 * A batch's HTTP answer from its elements' answers, in request order: a JSON array of the answers
 * present (notifications have none), 204 with no body when none is present. The status is 200, except
 * when every answer is an upstream error (no healthy origin, failed, timed out): then the first one's
 * (503/502/504), so a load balancer sees an outage as one.
 */
import type { SwitchyardError } from '../../errors/base.js';
import type { VerifyLevel } from './forwarder.js';
import { splicedLength, writeSpliced } from './id-splice.js';

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
      /** What verification proved of it (verified-header.ts); absent: nothing. */
      verified?: VerifyLevel | undefined;
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
  for (const answer of present) length += splicedLength(answer.body, answer.id, answer.clientId);
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  out[at++] = OPEN;
  present.forEach((answer, i) => {
    if (i > 0) out[at++] = COMMA;
    at = writeSpliced(out, at, answer.body, answer.id, answer.clientId);
  });
  out[at] = CLOSE;
  const first = present[0]?.error;
  const allUpstream = present.every((answer) => answer.error !== undefined && UPSTREAM_CODES.has(answer.error.code));
  return { status: allUpstream && first ? first.httpStatus : 200, body: out };
}
