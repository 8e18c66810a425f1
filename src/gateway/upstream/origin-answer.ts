/**
 * Checks of an origin's answer to one forwarded call (origin-forwarder.ts), on raw bytes: the span of our id
 * and of the `result`/`error` member in a whole answer, or of our id in the first bytes of a streaming one;
 * whether an error answer is a provider's rate-limit answer (`rateLimited`, for single calls and batch
 * elements alike). The id splice both ways is rpc/id-splice.ts.
 */
import type { Readable } from 'node:stream';
import { backoffOf, rateLimitAnswer } from '../../model/rate-limit-answers.js';
import { type MemberSpan, scanJson, scanObjectHead } from '../rpc/json-scan.js';
import { errorOf } from './answer-checks.js';
import { AttemptFailure } from './attempt-failure.js';

/** Error answers longer than this are not rate-limit answers (those are one short message). */
const MAX_ERROR_BYTES = 4096;

const OUTCOME_KEYS: ReadonlySet<string> = new Set(['result', 'error']);

/** The id span in the first bytes of a streaming answer, if they show our id before `result`/`error`. */
export function headId(head: Buffer, idText: string): { start: number; end: number } | undefined {
  const members = scanObjectHead(head, OUTCOME_KEYS);
  if (members === undefined) return undefined;
  const id = members.find((member) => member.key === 'id')?.value;
  if (id === undefined || head.toString('latin1', id.start, id.end) !== idText) return undefined;
  return id;
}

/** The rest of a body that started streaming, read whole (the attempt stops it by destroying `rest`). */
export async function collect(head: Buffer, rest: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [head];
  for await (const chunk of rest) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A JSON-RPC answer's id span and its `result` or `error` member (offsets into the scanned body). */
export interface AnswerParts {
  readonly id: { start: number; end: number };
  readonly outcome: MemberSpan;
}

/**
 * The id span and outcome of a JSON-RPC response carrying `result` or `error` and exactly our id (the
 * object between `start` and `end` of `body`; offsets stay the body's); else undefined.
 */
export function answerParts(body: Buffer, idText: string, start = 0, end = body.length): AnswerParts | undefined {
  const scanned = scanJson(body, start, end);
  if (scanned === undefined || scanned.kind !== 'object') return undefined;
  let id: { start: number; end: number } | undefined;
  let outcome: MemberSpan | undefined;
  for (const member of scanned.members) {
    if (member.key === 'id') id = member.value;
    else if (member.key === 'result' || member.key === 'error') outcome = member;
  }
  if (id === undefined || outcome === undefined) return undefined;
  if (body.toString('latin1', id.start, id.end) !== idText) return undefined;
  return { id, outcome };
}

/**
 * A `throttled` failure when the error object in body[start, end) is a provider's rate-limit answer
 * (model/rate-limit-answers.ts), carrying `answer` (a write passes it through); else undefined.
 */
export function rateLimited(body: Buffer, start: number, end: number, answer: unknown): AttemptFailure | undefined {
  if (end - start > MAX_ERROR_BYTES) return undefined;
  const error = errorOf(body, start, end);
  const row = rateLimitAnswer(error);
  if (row === undefined) return undefined;
  return new AttemptFailure('throttled', `rate limited (${row.provider}: ${error.message ?? ''})`, {
    retryAfterMs: backoffOf(error),
    answer,
  });
}
