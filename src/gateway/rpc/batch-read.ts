/**
 * The fast path of parseBody (request.ts) for the bodies clients send: a batch (an array of objects) or a
 * single object, each object with exactly the members jsonrpc ("2.0", written so), method (a string
 * without escapes), params (an array or an object) when present and id (a string, number or null) when
 * present, each once. Viem, ethers and web3 write every request this way.
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
 * mutated bodies). A batch's calls also carry the batch's plain ids (plain-id.ts), found on the way.
 *
 * State: none between reads. A BatchReader holds one read's progress (the previous element's method, the
 * params last read); it is made per body, so what it stores is as young as the calls it reads.
 */
import { isUtf8 } from 'node:buffer';
import { NULL_ID } from './id-splice.js';
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  isIdKey,
  isJsonrpcKey,
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

/**
 * How deep a request body may nest arrays and objects (a batch's array is level 1, a single request's
 * object too). Deeper bodies are refused at the gateway (request.ts, RPC_TOO_DEEP) and never reach an
 * origin: a real call nests a handful of levels, and a deep one can make an origin fail on every try.
 */
export const MAX_REQUEST_DEPTH = 64;

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
  const ids = new PlainIds();
  const reader = new BatchReader(body, ids);
  const { elements } = reader;
  for (;;) {
    i = reader.readCall(i);
    if (i < 0 || elements.length > maxBatch) return undefined;
    i = skipSpace(body, i, end);
    const c = body[i];
    if (c === CLOSE_ARRAY) break;
    if (c !== COMMA) return undefined;
    i = skipSpace(body, i + 1, end);
  }
  return skipSpace(body, i + 1, end) === end ? { elements, plainIds: ids.texts } : undefined;
}

/**
 * A single request in the common shape (see above): its element (a valid call, whose `raw` is the whole
 * body as the general reader's is); undefined: read it the general way.
 */
export function readSingle(body: Buffer): Element | undefined {
  const end = body.length;
  const start = skipSpace(body, 0, end);
  if (body[start] !== OPEN_OBJECT || !isUtf8(body)) return undefined;
  const reader = new BatchReader(body, undefined);
  const next = reader.readCall(start);
  return next >= 0 && skipSpace(body, next, end) === end ? reader.elements[0] : undefined;
}

/** One body's read in progress. */
class BatchReader {
  readonly elements: Element[] = [];
  readonly #body: Buffer;
  readonly #end: number;
  /**
   * Where a batch's plain ids are gathered. None for a single request: its call's bytes are then the whole
   * body, and it has no batch ids.
   */
  readonly #ids: PlainIds | undefined;
  /**
   * Strings are cut from one latin1 text of the body (a substring is far cheaper than a Buffer decode
   * per string); only strings of printable ASCII are, where latin1 and UTF-8 agree.
   */
  readonly #text: string;
  /**
   * The previous element's method: its offset in the body, and its text. Batches mostly repeat one
   * method, so one string serves the batch (the method table hashes it once) and a repeat is read by
   * comparing bytes with it.
   */
  #methodAt = -1;
  #method = '';
  /** The values #flatArray last read. */
  #flat: unknown[] = [];
  /** The value #scalar last read. */
  #scalarValue: unknown;

  constructor(body: Buffer, ids: PlainIds | undefined) {
    this.#body = body;
    this.#end = body.length;
    this.#ids = ids;
    this.#text = body.toString('latin1');
  }

  /**
   * Reads the element at `start` into `elements`; returns the offset past it, or -1 (not the common
   * shape). A single request's call spans the whole body (its id's offsets count from the body's start).
   */
  readCall(start: number): number {
    const body = this.#body;
    const end = this.#end;
    const ids = this.#ids;
    const single = ids === undefined;
    const base = single ? 0 : start;
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
        i = this.#readMethod(i);
        if (i < 0) return -1;
        method = this.#method;
      } else if (member === PARAMS) {
        const c = body[i];
        if (c !== OPEN_ARRAY && c !== OPEN_OBJECT) return -1;
        i = c === OPEN_ARRAY ? this.#flatArray(i) : -1;
        if (i < 0) {
          // Not a flat array: validated whole, then parsed on its own.
          // Params sit in the request object (level 1), which sits in the batch's array when there is one.
          i = valueEnd(body, valueStart, end, MAX_REQUEST_DEPTH - (single ? 1 : 2));
          if (i < 0) return -1;
          params = JSON.parse(body.toString('utf8', valueStart, i));
        } else {
          params = this.#flat;
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
        id = { kind, start: valueStart - base, end: i - base };
        ids?.add(body, this.#text, valueStart, i);
      }
      i = skipSpace(body, i, end);
      const c = body[i];
      if (c === CLOSE_OBJECT) break;
      if (c !== COMMA) return -1;
      i = skipSpace(body, i + 1, end);
    }
    if ((seen & (JSONRPC | METHOD)) !== (JSONRPC | METHOD)) return -1;
    if (id === undefined) ids?.missing();
    i += 1;
    this.elements.push(new BatchCall(body, base, single ? end : i, id, method, params));
    return i;
  }

  /** The method string at `i` into `#method` (the previous one when the bytes repeat it); the offset past it, or -1. */
  #readMethod(i: number): number {
    const body = this.#body;
    const at = this.#methodAt;
    const length = this.#method.length;
    if (at >= 0 && i + length + 2 <= this.#end && body[i] === QUOTE && body[i + length + 1] === QUOTE) {
      let k = 0;
      while (k < length && body[i + 1 + k] === body[at + k]) k += 1;
      if (k === length) return i + length + 2;
    }
    const next = plainStringEnd(body, i, this.#end);
    if (next < 0 || next === i + 2) return -1;
    this.#methodAt = i + 1;
    this.#method = this.#text.slice(i + 1, next - 1);
    return next;
  }

  /**
   * Reads the array at `i` into `#flat` when it holds only strings of printable ASCII without escapes,
   * numbers and literals (the common params: addresses, block tags, hashes, quantities): the values
   * JSON.parse gives for those bytes. Returns the offset past it, or -1 (not such an array, or not valid).
   * The first three values are kept in locals, so the array is made at its exact length (push would grow
   * a 17-slot store per call).
   */
  #flatArray(i: number): number {
    const body = this.#body;
    const end = this.#end;
    i = skipSpace(body, i + 1, end);
    if (body[i] === CLOSE_ARRAY) {
      this.#flat = [];
      return i + 1;
    }
    let count = 0;
    let first: unknown;
    let second: unknown;
    let third: unknown;
    let more: unknown[] | undefined;
    for (;;) {
      const next = this.#scalar(i);
      if (next < 0) return -1;
      const value = this.#scalarValue;
      if (count === 0) first = value;
      else if (count === 1) second = value;
      else if (count === 2) third = value;
      else if (more === undefined) more = [value];
      else more.push(value);
      count += 1;
      i = skipSpace(body, next, end);
      const d = body[i];
      if (d === CLOSE_ARRAY) {
        this.#flat =
          count === 1
            ? [first]
            : count === 2
              ? [first, second]
              : count === 3
                ? [first, second, third]
                : [first, second, third, ...(more as unknown[])];
        return i + 1;
      }
      if (d !== COMMA) return -1;
      i = skipSpace(body, i + 1, end);
    }
  }

  /** A plain string, a number or a literal at `i` into `#scalarValue`; the offset past it, or -1. */
  #scalar(i: number): number {
    const body = this.#body;
    const c = body[i];
    let next: number;
    if (c === QUOTE) {
      next = plainStringEnd(body, i, this.#end);
      if (next >= 0) this.#scalarValue = this.#text.slice(i + 1, next - 1);
    } else if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
      next = numberEnd(body, i, this.#end);
      if (next >= 0) this.#scalarValue = Number(this.#text.slice(i, next));
    } else {
      next = scalarEnd(body, i, this.#end);
      if (next >= 0) this.#scalarValue = c === 0x74 ? true : c === 0x66 ? false : null;
    }
    return next;
  }
}

/**
 * A call the one-pass reader read, which is also its own element (`ok`, `call`: one object per call, not
 * two). Its element's bytes and id bytes are cut from the body only when asked for: an upstream batch
 * sent as the client wrote it never needs them, and a Buffer view per call is a good part of a batch's
 * cost. A single request's bytes are the body itself.
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
    const body = this.#body;
    this.#raw ??= this.#start === 0 && this.#end === body.length ? body : body.subarray(this.#start, this.#end);
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
      return isIdKey(b, i) ? ID : 0;
    case 0x6a: // jsonrpc"
      return isJsonrpcKey(b, i) ? JSONRPC : 0;
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
for (let c = 0x20; c <= 0x7e; c += 1) PLAIN_BYTE[c] = c === QUOTE || c === BACKSLASH ? 0 : 1;

/** End of the string at `i` when its bytes are printable ASCII without escapes, else -1. */
function plainStringEnd(body: Buffer, i: number, end: number): number {
  if (body[i] !== QUOTE) return -1;
  i += 1;
  while (i < end && PLAIN_BYTE[body[i] as number] === 1) i += 1;
  return body[i] === QUOTE && i < end ? i + 1 : -1;
}
