/**
 * A validating JSON scanner over raw bytes that reports where the top-level members (of an object) or
 * elements (of an array) are, without building values. The gateway uses it to find a request's or a
 * response's `id` as raw bytes, so ids are never round-tripped through a JS number (2^64−1, 1e400 and
 * 12345678901234567890123 come back byte for byte), and to pass origin bodies through unchanged.
 *
 * Grammar: RFC 8259, strict (no trailing commas, no comments, no leading zeros, no NaN). Bytes ≥ 0x80
 * inside strings are accepted as they are (UTF-8 validity of requests is checked by the caller).
 * Nesting is tracked with an explicit stack, so deeply nested input cannot overflow the call stack.
 */

import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  type JsonKind,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  scalarEnd,
  scannedKind,
  skipSpace,
  stringEnd,
} from './json-lex.js';

export type { JsonKind } from './json-lex.js';

export interface ValueSpan {
  kind: JsonKind;
  /** Offset of the value's first byte. */
  start: number;
  /** Offset just past the value's last byte. */
  end: number;
}

export interface MemberSpan {
  /** The decoded member name. */
  key: string;
  value: ValueSpan;
}

export interface Scanned extends ValueSpan {
  /** Top-level object members in document order (duplicates kept). */
  members: MemberSpan[];
  /** Top-level array elements in document order. */
  elements: ValueSpan[];
  /**
   * With `nested` (scanJson's option), for a top-level array: per element, parallel to `elements`, its
   * members when it is an object (value offsets relative to the element's start), else undefined. One
   * pass finds a batch's elements and their members, instead of scanning each element a second time.
   */
  elementMembers?: Array<MemberSpan[] | undefined>;
}

/** The member names of JSON-RPC requests and answers: returned as constants, no string made per key. */
const KNOWN_KEYS: ReadonlyArray<{ key: string; bytes: Uint8Array }> = [
  'id',
  'jsonrpc',
  'method',
  'params',
  'result',
  'error',
].map((key) => ({ key, bytes: Buffer.from(key) }));

/** KNOWN_KEYS by length and first byte (`length * 256 + byte`): one lookup instead of trying each. */
const KNOWN_BY_HEAD = new Map(
  KNOWN_KEYS.map((known) => [known.bytes.length * 256 + (known.bytes[0] as number), known]),
);

function knownKey(buf: Uint8Array, from: number, length: number): string | undefined {
  const known = KNOWN_BY_HEAD.get(length * 256 + (buf[from] as number));
  if (known === undefined) return undefined;
  for (let j = 1; j < length; j += 1) if (buf[from + j] !== known.bytes[j]) return undefined;
  return known.key;
}

/** The decoded member name whose quoted text is `buf[start, end)` (escapes resolved). */
export function decodeKey(buf: Uint8Array, start: number, end: number): string {
  for (let i = start + 1; i < end - 1; i += 1) {
    if (buf[i] === BACKSLASH)
      return JSON.parse(Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString());
  }
  return (
    knownKey(buf, start + 1, end - start - 2) ??
    Buffer.from(buf.buffer, buf.byteOffset + start + 1, end - start - 2).toString()
  );
}

/**
 * Scans `buf[from, to)` as one JSON document. Returns undefined when it is not valid JSON (including
 * empty input or trailing bytes after the value), or nests arrays and objects more than `maxDepth`
 * deep (the top-level container is depth 1). `nested`: also report the members of a top-level array's
 * object elements (`elementMembers`).
 *
 * One loop on purpose: it runs over every token of every request and answer, and JSON scanning is among
 * the largest self-time entries of the gateway's light-load and batch profiles (docs/benchmarks.md);
 * the lexing it can hand off (strings, scalars, space) is already in json-lex.ts, and what is left is
 * the stack of one state machine, whose parts share its locals.
 */
export function scanJson(
  buf: Uint8Array,
  from = 0,
  to = buf.length,
  nested = false,
  maxDepth = Number.POSITIVE_INFINITY,
): Scanned | undefined {
  let i = skipSpace(buf, from, to);
  if (i >= to) return undefined;
  const members: MemberSpan[] = [];
  const elements: ValueSpan[] = [];
  const first = buf[i];
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
    const e = scalarEnd(buf, i, to);
    if (e < 0 || skipSpace(buf, e, to) !== to) return undefined;
    return { kind: scannedKind, start: i, end: e, members, elements };
  }

  const topStart = i;
  // Stack of open containers: true = object, false = array.
  const stack: boolean[] = [];
  let pendingKey: string | undefined;
  let pendingStart = -1;
  let pendingKind: JsonKind = 'null';
  // States: 0 = expect value, 1 = expect key (or '}' right after '{'), 2 = after value.
  let state = 0;
  let topEnd = -1;
  // `nested`, inside an object element of the top-level array: its members so far, and the pending one.
  const elementMembers: Array<MemberSpan[] | undefined> | undefined = nested && first === OPEN_ARRAY ? [] : undefined;
  let inner: MemberSpan[] | undefined;
  let innerKey: string | undefined;
  let innerStart = -1;
  let innerKind: JsonKind = 'null';

  while (true) {
    if (state !== 2) {
      i = skipSpace(buf, i, to);
      if (i >= to) return undefined;
    }
    const c = buf[i] as number;
    if (state === 0) {
      if (stack.length === 1) {
        pendingStart = i;
        if (elementMembers !== undefined) inner = c === OPEN_OBJECT ? [] : undefined;
      } else if (inner !== undefined && stack.length === 2) {
        innerStart = i;
      }
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (stack.length === 1) pendingKind = c === OPEN_OBJECT ? 'object' : 'array';
        else if (inner !== undefined && stack.length === 2) innerKind = c === OPEN_OBJECT ? 'object' : 'array';
        if (stack.length >= maxDepth) return undefined;
        stack.push(c === OPEN_OBJECT);
        i += 1;
        const next = skipSpace(buf, i, to);
        if (c === OPEN_OBJECT && buf[next] === CLOSE_OBJECT) {
          stack.pop();
          i = next + 1;
          state = 2;
        } else if (c === OPEN_ARRAY && buf[next] === CLOSE_ARRAY) {
          stack.pop();
          i = next + 1;
          state = 2;
        } else {
          state = c === OPEN_OBJECT ? 1 : 0;
        }
      } else {
        const e = scalarEnd(buf, i, to);
        if (e < 0) return undefined;
        if (stack.length === 1) pendingKind = scannedKind;
        else if (inner !== undefined && stack.length === 2) innerKind = scannedKind;
        i = e;
        state = 2;
      }
    } else if (state === 1) {
      if (c !== QUOTE) return undefined;
      const keyEnd = stringEnd(buf, i, to);
      if (keyEnd < 0) return undefined;
      if (stack.length === 1) pendingKey = decodeKey(buf, i, keyEnd);
      else if (inner !== undefined && stack.length === 2) innerKey = decodeKey(buf, i, keyEnd);
      i = skipSpace(buf, keyEnd, to);
      if (buf[i] !== COLON) return undefined;
      i += 1;
      state = 0;
    } else {
      // A value just ended at offset i (before any whitespace).
      if (stack.length === 1 && pendingStart >= 0) {
        const span: ValueSpan = { kind: pendingKind, start: pendingStart, end: i };
        if (stack[0]) members.push({ key: pendingKey as string, value: span });
        else {
          elements.push(span);
          elementMembers?.push(inner);
          inner = undefined;
        }
        pendingStart = -1;
      } else if (inner !== undefined && stack.length === 2 && innerStart >= 0) {
        const value: ValueSpan = { kind: innerKind, start: innerStart - pendingStart, end: i - pendingStart };
        inner.push({ key: innerKey as string, value });
        innerStart = -1;
      }
      if (stack.length === 0) {
        topEnd = i;
        break;
      }
      const j = skipSpace(buf, i, to);
      const d = buf[j];
      const inObject = stack[stack.length - 1] as boolean;
      if (d === COMMA) {
        i = j + 1;
        state = inObject ? 1 : 0;
      } else if ((inObject && d === CLOSE_OBJECT) || (!inObject && d === CLOSE_ARRAY)) {
        stack.pop();
        i = j + 1;
        state = 2;
      } else {
        return undefined;
      }
    }
  }
  if (skipSpace(buf, topEnd, to) !== to) return undefined;
  const kind = first === OPEN_OBJECT ? 'object' : 'array';
  if (elementMembers !== undefined) return { kind, start: topStart, end: topEnd, members, elements, elementMembers };
  return { kind, start: topStart, end: topEnd, members, elements };
}

/**
 * The first members of a top-level object in a document that may still be arriving: members up to and
 * including the first whose key is in `stop`; that member's value is not scanned (its span starts at
 * the value and ends at -1). Every member before it must be complete and have a scalar value.
 * Returns undefined when the bytes do not start that way (not an object, a container value before the
 * stop key, the stop key not reached yet, or malformed), so the caller can fall back to a full scan.
 */
export function scanObjectHead(buf: Uint8Array, stop: ReadonlySet<string>): MemberSpan[] | undefined {
  const to = buf.length;
  let i = skipSpace(buf, 0, to);
  if (buf[i] !== OPEN_OBJECT) return undefined;
  i += 1;
  const members: MemberSpan[] = [];
  for (;;) {
    i = skipSpace(buf, i, to);
    if (buf[i] !== QUOTE) return undefined;
    const keyEnd = stringEnd(buf, i, to);
    if (keyEnd < 0) return undefined;
    const key = decodeKey(buf, i, keyEnd);
    i = skipSpace(buf, keyEnd, to);
    if (buf[i] !== COLON) return undefined;
    i = skipSpace(buf, i + 1, to);
    if (i >= to) return undefined;
    if (stop.has(key)) {
      members.push({ key, value: { kind: 'null', start: i, end: -1 } });
      return members;
    }
    const end = scalarEnd(buf, i, to);
    // A number may continue in the next chunk: only a value followed by more bytes is complete.
    if (end < 0 || end >= to) return undefined;
    members.push({ key, value: { kind: scannedKind, start: i, end } });
    i = skipSpace(buf, end, to);
    if (buf[i] !== COMMA) return undefined;
    i += 1;
  }
}
