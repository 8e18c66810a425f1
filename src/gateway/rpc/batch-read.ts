/**
 * The fast path of parseBody (request.ts) for the batches clients send: an array of objects, each with
 * exactly the members jsonrpc ("2.0", written so), method (a string without escapes), params (an array or
 * an object) when present and id (a string, number or null) when present, each once. Viem, ethers and
 * web3 write every batch this way.
 *
 * One pass over the bytes builds the calls, with no JSON.parse of the whole body and no member lists:
 * a flat params array of strings without escapes, numbers and literals is decoded where it stands
 * (JSON.parse gives the same values for those bytes); any other params value is validated here and
 * parsed on its own.
 *
 * Anything else — another member, one given twice, an element parseBody would refuse, an escape in a
 * method, more elements than maxBatch, a body that is not valid JSON or not UTF-8 — returns undefined,
 * and parseBody reads the body the general way, which words every error. So this path decides nothing:
 * when it answers, its calls equal the general path's (batch-read.test.ts checks that on generated and
 * mutated bodies). The calls also carry the batch's plain ids (plain-id.ts), found on the way.
 *
 * State: module variables of the one read in progress (the previous element's method, the values
 * flatArray last read), reset by each readBatch; reads are synchronous, so they never interleave.
 */
import { isUtf8 } from 'node:buffer';
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  isVersion20,
  type JsonKind,
  numberEnd,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  scalarEnd,
  skipSpace,
  stringEnd,
  valueEnd,
} from './json-lex.js';
import type { ValueSpan } from './json-scan.js';
import { PlainIds } from './plain-id.js';
import type { Element, RpcCall } from './request.js';

/** A notification's idBytes (request.ts uses the same bytes). */
export const NULL_ID = Buffer.from('null');

// The four members, as bits of what an element has given so far.
const JSONRPC = 1;
const METHOD = 2;
const PARAMS = 4;
const ID = 8;

/** A batch read by readBatch: its calls, and their ids when plain and unique (else false). */
export interface CommonBatch {
  readonly elements: Element[];
  readonly plainIds: readonly string[] | false;
}

/** The calls of a batch in the common shape (see above); undefined: read it the general way. */
export function readBatch(body: Buffer, maxBatch: number): CommonBatch | undefined {
  const end = body.length;
  let i = skipSpace(body, 0, end);
  if (body[i] !== OPEN_ARRAY || !isUtf8(body)) return undefined;
  i = skipSpace(body, i + 1, end);
  // Strings are cut from one latin1 text of the body (a substring is far cheaper than a Buffer decode
  // per string); only strings of printable ASCII are, where latin1 and UTF-8 agree.
  const text = body.toString('latin1');
  previousMethodAt = -1;
  const elements: Element[] = [];
  const ids = new PlainIds();
  for (;;) {
    i = readCall(body, text, i, end, elements, ids);
    if (i < 0 || elements.length > maxBatch) return undefined;
    i = skipSpace(body, i, end);
    const c = body[i];
    if (c === CLOSE_ARRAY) break;
    if (c !== COMMA) return undefined;
    i = skipSpace(body, i + 1, end);
  }
  return skipSpace(body, i + 1, end) === end ? { elements, plainIds: ids.texts } : undefined;
}

/** Reads the element at `start` into `out`; returns the offset past it, or -1 (not the common shape). */
function readCall(body: Buffer, text: string, start: number, end: number, out: Element[], ids: PlainIds): number {
  if (body[start] !== OPEN_OBJECT) return -1;
  let seen = 0;
  let method = '';
  let id: { kind: JsonKind; start: number; end: number } | undefined;
  let params: unknown;
  let i = skipSpace(body, start + 1, end);
  for (;;) {
    const member = memberAt(body, i);
    if (member === 0 || (seen & member) !== 0) return -1;
    seen |= member;
    i = skipSpace(body, i + keyLength(member), end);
    if (body[i] !== COLON) return -1;
    i = skipSpace(body, i + 1, end);
    const valueStart = i;
    if (member === JSONRPC) {
      if (!isVersion20(body, i)) return -1;
      i += 5;
    } else if (member === METHOD) {
      if (repeatsMethod(body, i, end)) {
        method = previousMethod;
        i += method.length + 2;
      } else {
        i = plainStringEnd(body, i, end);
        if (i < 0 || i === valueStart + 2) return -1;
        previousMethodAt = valueStart + 1;
        previousMethod = text.slice(valueStart + 1, i - 1);
        method = previousMethod;
      }
    } else if (member === PARAMS) {
      const c = body[i];
      if (c !== OPEN_ARRAY && c !== OPEN_OBJECT) return -1;
      i = c === OPEN_ARRAY ? flatArray(body, text, i, end) : -1;
      if (i < 0) {
        // Not a flat array: validated whole, then parsed on its own.
        i = valueEnd(body, valueStart, end);
        if (i < 0) return -1;
        params = JSON.parse(body.toString('utf8', valueStart, i));
      } else {
        params = flat;
      }
    } else {
      const c = body[i];
      let kind: JsonKind;
      if (c === QUOTE) {
        kind = 'string';
        i = stringEnd(body, i, end);
      } else if (c === 0x6e) {
        kind = 'null';
        i = body[i + 1] === 0x75 && body[i + 2] === 0x6c && body[i + 3] === 0x6c ? i + 4 : -1;
      } else {
        kind = 'number';
        i = numberEnd(body, i, end);
      }
      if (i < 0) return -1;
      id = { kind, start: valueStart - start, end: i - start };
      ids.add(body, text, valueStart, i);
    }
    i = skipSpace(body, i, end);
    const c = body[i];
    if (c === CLOSE_OBJECT) break;
    if (c !== COMMA) return -1;
    i = skipSpace(body, i + 1, end);
  }
  if ((seen & (JSONRPC | METHOD)) !== (JSONRPC | METHOD)) return -1;
  if (id === undefined) ids.missing();
  i += 1;
  out.push(new BatchCall(body, start, i, id, method, params));
  return i;
}

/**
 * A call readBatch read, which is also its own element (`ok`, `call`: one object per call, not two). Its
 * element's bytes and id bytes are cut from the body only when asked for: an upstream batch sent as the
 * client wrote it never needs them, and a Buffer view per call is a good part of a batch's cost.
 */
class BatchCall implements RpcCall {
  readonly ok = true;
  readonly extraMembers = false;
  readonly #body: Buffer;
  readonly #start: number;
  readonly #end: number;
  #raw: Buffer | undefined;

  constructor(
    body: Buffer,
    start: number,
    end: number,
    readonly id: ValueSpan | undefined,
    readonly method: string,
    readonly params: unknown,
  ) {
    this.#body = body;
    this.#start = start;
    this.#end = end;
  }

  get call(): RpcCall {
    return this;
  }

  get raw(): Buffer {
    this.#raw ??= this.#body.subarray(this.#start, this.#end);
    return this.#raw;
  }

  get idBytes(): Buffer {
    const id = this.id;
    return id === undefined ? NULL_ID : this.raw.subarray(id.start, id.end);
  }
}

/** Which of the four members the key at `i` names (0: none, or not a plain key). Unrolled: it runs per member. */
function memberAt(b: Buffer, i: number): number {
  if (b[i] !== QUOTE) return 0;
  switch (b[i + 1]) {
    case 0x69: // id"
      return b[i + 2] === 0x64 && b[i + 3] === QUOTE ? ID : 0;
    case 0x6a: // jsonrpc"
      return b[i + 2] === 0x73 &&
        b[i + 3] === 0x6f &&
        b[i + 4] === 0x6e &&
        b[i + 5] === 0x72 &&
        b[i + 6] === 0x70 &&
        b[i + 7] === 0x63 &&
        b[i + 8] === QUOTE
        ? JSONRPC
        : 0;
    case 0x6d: // method"
      return b[i + 2] === 0x65 &&
        b[i + 3] === 0x74 &&
        b[i + 4] === 0x68 &&
        b[i + 5] === 0x6f &&
        b[i + 6] === 0x64 &&
        b[i + 7] === QUOTE
        ? METHOD
        : 0;
    case 0x70: // params"
      return b[i + 2] === 0x61 &&
        b[i + 3] === 0x72 &&
        b[i + 4] === 0x61 &&
        b[i + 5] === 0x6d &&
        b[i + 6] === 0x73 &&
        b[i + 7] === QUOTE
        ? PARAMS
        : 0;
    default:
      return 0;
  }
}

/** The member's key length with its quotes. */
function keyLength(member: number): number {
  return member === ID ? 4 : member === JSONRPC ? 9 : 8;
}

/** 1 for the bytes a plain string holds: printable ASCII but the quote and the backslash. */
const PLAIN_BYTE = new Uint8Array(256);
for (let c = 0x20; c <= 0x7e; c += 1) PLAIN_BYTE[c] = c === QUOTE || c === 0x5c ? 0 : 1;

/** End of the string at `i` when its bytes are printable ASCII without escapes, else -1. */
function plainStringEnd(body: Buffer, i: number, end: number): number {
  if (body[i] !== QUOTE) return -1;
  i += 1;
  while (i < end && PLAIN_BYTE[body[i] as number] === 1) i += 1;
  return body[i] === QUOTE && i < end ? i + 1 : -1;
}

/**
 * The method of the batch's previous element: its offset in the body, and its text. Batches mostly repeat
 * one method, so one string serves the batch (the method table hashes it once) and a repeat is read by
 * comparing bytes with it.
 */
let previousMethodAt = -1;
let previousMethod = '';

/** Whether the string at `i` is the previous element's method, quotes and all (so plain, as it was). */
function repeatsMethod(body: Buffer, i: number, end: number): boolean {
  const at = previousMethodAt;
  const length = previousMethod.length;
  if (at < 0 || i + length + 2 > end || body[i] !== QUOTE || body[i + length + 1] !== QUOTE) return false;
  for (let k = 0; k < length; k += 1) if (body[i + 1 + k] !== body[at + k]) return false;
  return true;
}

/** The values flatArray last read. */
let flat: unknown[] = [];

/** Where flatArray collects values before it makes `flat` of their exact length (push would grow a 17-slot store). */
const collected: unknown[] = [];

/** `flat` from the first `count` collected values, in an array of exactly that length. */
function takeCollected(count: number): void {
  if (count === 1) flat = [collected[0]];
  else if (count === 2) flat = [collected[0], collected[1]];
  else if (count === 3) flat = [collected[0], collected[1], collected[2]];
  else flat = collected.slice(0, count);
}

/**
 * Reads the array at `i` into `flat` when it holds only strings of printable ASCII without escapes,
 * numbers and literals (the common params: addresses, block tags, hashes, quantities): the values
 * JSON.parse gives for those bytes. Returns the offset past it, or -1 (not such an array, or not valid).
 */
function flatArray(body: Buffer, text: string, i: number, end: number): number {
  i = skipSpace(body, i + 1, end);
  if (body[i] === CLOSE_ARRAY) {
    flat = [];
    return i + 1;
  }
  let count = 0;
  for (;;) {
    const c = body[i];
    let next: number;
    if (c === QUOTE) {
      next = plainStringEnd(body, i, end);
      if (next < 0) return -1;
      collected[count] = text.slice(i + 1, next - 1);
    } else if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
      next = numberEnd(body, i, end);
      if (next < 0) return -1;
      collected[count] = Number(text.slice(i, next));
    } else {
      next = scalarEnd(body, i, end);
      if (next < 0) return -1;
      collected[count] = c === 0x74 ? true : c === 0x66 ? false : null;
    }
    count += 1;
    i = skipSpace(body, next, end);
    const d = body[i];
    if (d === CLOSE_ARRAY) {
      takeCollected(count);
      return i + 1;
    }
    if (d !== COMMA) return -1;
    i = skipSpace(body, i + 1, end);
  }
}
