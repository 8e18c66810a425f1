/**
 * A batch's HTTP answer from its elements' answers, in request order: a JSON array of the answers
 * present (notifications have none), 204 with no body when none is present. The status is 200, except
 * when every answer is an upstream error (no healthy origin, failed, timed out): then the first one's
 * (503/502/504), so a load balancer sees an outage as one.
 */
import type { SwitchyardError } from '../../errors/base.js';

/**
 * One element's answer in a batch response (undefined: a notification, which gets no element); `error`
 * when the gateway answered it with an error, `failed` when the origin did.
 */
export type BatchAnswer = { body: Buffer; error?: SwitchyardError; failed?: boolean } | undefined;

const UPSTREAM_CODES = new Set(['NO_HEALTHY_ORIGIN', 'UPSTREAM_FAILED', 'UPSTREAM_TIMEOUT']);
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

export function batchResponse(answers: readonly BatchAnswer[]): { status: number; body: Buffer | undefined } {
  const present = answers.filter((answer) => answer !== undefined);
  if (present.length === 0) return { status: 204, body: undefined };
  const parts: Buffer[] = [OPEN];
  present.forEach((answer, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(answer.body);
  });
  parts.push(CLOSE);
  const first = present[0]?.error;
  const allUpstream = present.every((answer) => answer.error !== undefined && UPSTREAM_CODES.has(answer.error.code));
  return { status: allUpstream && first ? first.httpStatus : 200, body: Buffer.concat(parts) };
}
