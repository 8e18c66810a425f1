/**
 * Upstream batches (proxyd-style): the forwardable calls of a client's batch go to one origin as one
 * JSON-RPC batch, each with an id of ours, and the origin's array is matched back to the calls by
 * those ids. origin-forwarder.ts (OriginForwarder.forwardBatch) runs the attempts; this file builds the wire
 * bytes and reads the origin's answer. Nothing is re-serialised: each element is the client's own
 * bytes with only its id replaced, and each answer element is a slice of the origin's body with the
 * span of its id, so the handler splices the client's raw id in exactly as for a single request.
 */

import { splicedLength, writeSpliced } from '../rpc/id-splice.js';
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  isIdKey,
  isJsonrpcKey,
  isVersion20,
  type JsonKind,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  scalarEnd,
  skipSpace,
  stringEnd,
  valueEnd,
} from '../rpc/json-lex.js';
import { type MemberSpan, scanJson, type ValueSpan } from '../rpc/json-scan.js';
import type { RpcCall } from '../rpc/request.js';

/** Where an answer element's id and its `result` or `error` value are, as offsets inside the element. */
export interface AnswerSpans {
  idStart: number;
  idEnd: number;
  outcomeKey: 'result' | 'error';
  valueStart: number;
  valueEnd: number;
}

/**
 * One answer of the origin's array: offsets only. Its bytes (`body`) and span objects (`id`, `outcome`) are
 * made when asked for (each reader asks once): an array answered in order mostly goes to the client whole,
 * and a Buffer view and three small objects per answer were a good part of matching it, and of what each
 * scavenge copies. Kinds are read off the value's first byte.
 */
export class BatchElementAnswer implements AnswerSpans {
  readonly idStart: number;
  readonly idEnd: number;
  readonly outcomeKey: 'result' | 'error';
  readonly valueStart: number;
  readonly valueEnd: number;

  constructor(
    /** The origin's whole array. */
    readonly array: Buffer,
    /** The element's offsets in `array`. */
    readonly start: number,
    readonly end: number,
    spans: AnswerSpans,
  ) {
    this.idStart = spans.idStart;
    this.idEnd = spans.idEnd;
    this.outcomeKey = spans.outcomeKey;
    this.valueStart = spans.valueStart;
    this.valueEnd = spans.valueEnd;
  }

  /** The origin's answer element, unchanged. */
  get body(): Buffer {
    return this.array.subarray(this.start, this.end);
  }

  /** Span of the id inside `body`. */
  get id(): ValueSpan {
    return { kind: kindAt(this.array, this.start + this.idStart), start: this.idStart, end: this.idEnd };
  }

  /** The kind of the `result` or `error` value. */
  get valueKind(): JsonKind {
    return kindAt(this.array, this.start + this.valueStart);
  }

  /** The `result` or `error` member, its offsets inside `body`. */
  get outcome(): MemberSpan {
    return { key: this.outcomeKey, value: { kind: this.valueKind, start: this.valueStart, end: this.valueEnd } };
  }
}

/** `[call, call, …]` with each call's id replaced by ours (notifications, `undefined` ids, unchanged). */
export function batchWire(calls: readonly RpcCall[], ids: readonly (string | undefined)[]): Buffer {
  let length = calls.length + 1; // brackets and commas
  calls.forEach((call, i) => {
    length += splicedLength(call.raw, call.id, ids[i]);
  });
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  out[at++] = OPEN_ARRAY;
  calls.forEach((call, i) => {
    if (i > 0) out[at++] = COMMA;
    at = writeSpliced(out, at, call.raw, call.id, ids[i]);
  });
  out[at] = CLOSE_ARRAY;
  return out;
}

/** The origin's answers to an upstream batch, per call (matchBatch). */
export interface MatchedBatch {
  readonly answers: Array<BatchElementAnswer | undefined>;
  /** The array holds exactly one answer per call, in call order, and nothing else. */
  readonly inOrder: boolean;
}

/**
 * The origin's answers matched to the ids sent, in call order (undefined where the array has no
 * answer — with `result` or `error` — carrying that id, and for notifications). Returns undefined when
 * the body is not a JSON array, or when it answers none of the calls that have an id: the origin failed
 * as a whole. An array answering only some calls is accepted; the rest go out again one by one.
 */
export function matchBatch(body: Buffer, ids: readonly (string | undefined)[]): MatchedBatch | undefined {
  let expected = 0;
  for (const id of ids) if (id !== undefined) expected += 1;
  if (expected === 0) return { answers: ids.map(() => undefined), inOrder: false };
  // Nodes answer in request order: read that way in one pass, else scanned and matched by id.
  const inOrder = expected === ids.length ? inOrderAnswers(body, ids as readonly string[]) : undefined;
  return inOrder !== undefined ? { answers: inOrder, inOrder: true } : matchByScan(body, ids);
}

/** matchBatch for any array (exported for batch-wire.test.ts, which compares): a scan, then by position or id. */
export function matchByScan(body: Buffer, ids: readonly (string | undefined)[]): MatchedBatch | undefined {
  // One scan finds the elements and their members (offsets inside each element).
  const scanned = scanJson(body, 0, body.length, true);
  if (scanned === undefined || scanned.kind !== 'array') return undefined;
  const found = scanned.elements.map((element, index) => elementAnswer(body, element, scanned.elementMembers?.[index]));
  // Nodes answer in request order: element k carrying id k is checked without a string or a map.
  if (found.length === ids.length && found.every((answer, k) => answer !== undefined && hasId(answer, ids[k]))) {
    return { answers: found, inOrder: true };
  }
  const byId = new Map<string, BatchElementAnswer>();
  for (const answer of found) {
    if (answer === undefined) continue;
    const key = answer.array.toString('latin1', answer.start + answer.idStart, answer.start + answer.idEnd);
    if (!byId.has(key)) byId.set(key, answer);
  }
  let matched = 0;
  const answers = ids.map((id) => {
    const answer = id === undefined ? undefined : byId.get(id);
    if (answer !== undefined) matched += 1;
    return answer;
  });
  return matched === 0 ? undefined : { answers, inOrder: false };
}

/** An array element as an answer: an object with an id and a `result` or `error`; else undefined. */
function elementAnswer(
  body: Buffer,
  element: { start: number; end: number },
  members: readonly MemberSpan[] | undefined,
): BatchElementAnswer | undefined {
  if (members === undefined) return undefined;
  let id: ValueSpan | undefined;
  let outcome: MemberSpan | undefined;
  for (const member of members) {
    if (member.key === 'id') id = member.value;
    else if (member.key === 'result' || member.key === 'error') outcome = member;
  }
  if (id === undefined || outcome === undefined) return undefined;
  const { value } = outcome;
  return new BatchElementAnswer(body, element.start, element.end, {
    idStart: id.start,
    idEnd: id.end,
    outcomeKey: outcome.key as 'result' | 'error',
    valueStart: value.start,
    valueEnd: value.end,
  });
}

/** Whether the answer's raw id is exactly `id` (latin1 text of the id sent). */
function hasId(answer: BatchElementAnswer, id: string | undefined): boolean {
  return id !== undefined && sameText(answer.array, answer.start + answer.idStart, answer.start + answer.idEnd, id);
}

/**
 * The answers when `body` is an array of exactly one answer per id, in order: element k an object whose
 * `id` is ids[k] byte for byte, with a `result` or an `error`, each member once. One validating pass, no
 * member lists. Undefined otherwise (matchBatch then scans and matches by id, which decides the rest).
 */
function inOrderAnswers(body: Buffer, ids: readonly string[]): BatchElementAnswer[] | undefined {
  const end = body.length;
  let i = skipSpace(body, 0, end);
  if (body[i] !== OPEN_ARRAY) return undefined;
  const answers: BatchElementAnswer[] = new Array(ids.length);
  let count = 0;
  // One spans record per array, filled per element (each answer copies it).
  const spans: AnswerSpans = { idStart: -1, idEnd: -1, outcomeKey: 'result', valueStart: -1, valueEnd: -1 };
  for (const expected of ids) {
    i = skipSpace(body, i + 1, end);
    const start = i;
    if (body[i] !== OPEN_OBJECT) return undefined;
    let sawId = false;
    let sawOutcome = false;
    let hasJsonrpc = false;
    i = skipSpace(body, i + 1, end);
    for (;;) {
      const key = answerKey(body, i);
      if (key === undefined) return undefined;
      i = skipSpace(body, i + key.length + 2, end);
      if (body[i] !== COLON) return undefined;
      i = skipSpace(body, i + 1, end);
      const valueStart = i;
      // Results are mostly strings (quantities, hashes): scanned without valueEnd's container machinery.
      i =
        key === 'id'
          ? scalarEnd(body, i, end)
          : key === 'jsonrpc' && isVersion20(body, i)
            ? i + 5
            : body[i] === QUOTE
              ? stringEnd(body, i, end)
              : valueEnd(body, i, end);
      if (i < 0) return undefined;
      if (key === 'id') {
        if (sawId || !sameText(body, valueStart, i, expected)) return undefined;
        sawId = true;
        spans.idStart = valueStart - start;
        spans.idEnd = i - start;
      } else if (key === 'result' || key === 'error') {
        if (sawOutcome) return undefined;
        sawOutcome = true;
        spans.outcomeKey = key;
        spans.valueStart = valueStart - start;
        spans.valueEnd = i - start;
      } else {
        if (hasJsonrpc) return undefined;
        hasJsonrpc = true;
      }
      i = skipSpace(body, i, end);
      if (body[i] === CLOSE_OBJECT) break;
      if (body[i] !== COMMA) return undefined;
      i = skipSpace(body, i + 1, end);
    }
    if (!sawId || !sawOutcome) return undefined;
    i += 1;
    answers[count] = new BatchElementAnswer(body, start, i, spans);
    count += 1;
    i = skipSpace(body, i, end);
    if (body[i] !== (count === ids.length ? CLOSE_ARRAY : COMMA)) return undefined;
  }
  return skipSpace(body, i + 1, end) === end ? answers : undefined;
}

/**
 * The member an answer's key at `i` names (its quotes around it), else undefined. Unrolled byte by byte
 * like batch-read.ts memberAt: it runs for every member of every answer.
 */
function answerKey(b: Buffer, i: number): 'id' | 'jsonrpc' | 'result' | 'error' | undefined {
  if (b[i] !== QUOTE) return undefined;
  switch (b[i + 1]) {
    case 0x69: // id"
      return isIdKey(b, i) ? 'id' : undefined;
    case 0x72: // result"
      return b[i + 2] === 0x65 &&
        b[i + 3] === 0x73 &&
        b[i + 4] === 0x75 &&
        b[i + 5] === 0x6c &&
        b[i + 6] === 0x74 &&
        b[i + 7] === QUOTE
        ? 'result'
        : undefined;
    case 0x6a: // jsonrpc"
      return isJsonrpcKey(b, i) ? 'jsonrpc' : undefined;
    case 0x65: // error"
      return b[i + 2] === 0x72 && b[i + 3] === 0x72 && b[i + 4] === 0x6f && b[i + 5] === 0x72 && b[i + 6] === QUOTE
        ? 'error'
        : undefined;
    default:
      return undefined;
  }
}

function sameText(body: Buffer, start: number, end: number, text: string): boolean {
  if (end - start !== text.length) return false;
  for (let k = 0; k < text.length; k += 1) if (body[start + k] !== text.charCodeAt(k)) return false;
  return true;
}

function kindAt(body: Buffer, i: number): JsonKind {
  const c = body[i];
  if (c === QUOTE) return 'string';
  if (c === OPEN_OBJECT) return 'object';
  if (c === OPEN_ARRAY) return 'array';
  if (c === 0x74) return 'true';
  if (c === 0x66) return 'false';
  if (c === 0x6e) return 'null';
  return 'number';
}
