/**
 * The lexical layer of the gateway's JSON readers (json-scan.ts, batch-read.ts, upstream/batch-wire.ts): strict
 * RFC 8259 strings, numbers and literals over raw bytes, each returning the offset just past the token or
 * -1 when the bytes are not one. Bytes ≥ 0x80 inside strings are accepted as they are (callers that need
 * UTF-8 check it once for the whole body).
 *
 * State: `scannedKind`, the kind of the scalar scalarEnd last read (a module variable instead of an object
 * per scalar: answers hold hundreds of thousands of them).
 */

export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'true' | 'false' | 'null';

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export function skipSpace(buf: Uint8Array, i: number, end: number): number {
  // Bodies are mostly compact: one comparison tells most bytes are not whitespace.
  while (i < end && (buf[i] as number) <= 0x20 && isSpace(buf[i])) i += 1;
  return i;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

/** 1 for the bytes a string holds as they are: not the quote, the backslash or a control character. */
const STRING_BYTE = new Uint8Array(256).fill(1);
STRING_BYTE.fill(0, 0, 0x20);
STRING_BYTE[QUOTE] = 0;
STRING_BYTE[BACKSLASH] = 0;

/** End offset of the string starting at `i` (a quote), or -1 if malformed. */
export function stringEnd(buf: Uint8Array, i: number, end: number): number {
  i += 1;
  while (i < end) {
    // Runs of plain bytes by table, one load and one comparison each.
    while (i < end && STRING_BYTE[buf[i] as number] === 1) i += 1;
    if (i >= end) return -1;
    const c = buf[i] as number;
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -1;
    if (c === BACKSLASH) {
      const e = buf[i + 1];
      if (e === 0x75) {
        if (!(isHex(buf[i + 2]) && isHex(buf[i + 3]) && isHex(buf[i + 4]) && isHex(buf[i + 5]))) return -1;
        i += 6;
        continue;
      }
      // " \ / b f n r t
      if (
        e !== QUOTE &&
        e !== BACKSLASH &&
        e !== 0x2f &&
        e !== 0x62 &&
        e !== 0x66 &&
        e !== 0x6e &&
        e !== 0x72 &&
        e !== 0x74
      ) {
        return -1;
      }
      i += 2;
      continue;
    }
    i += 1;
  }
  return -1;
}

/** End offset of the number starting at `i`, or -1. */
export function numberEnd(buf: Uint8Array, i: number, end: number): number {
  if (buf[i] === 0x2d) i += 1;
  if (buf[i] === 0x30) i += 1;
  else if (isDigit(buf[i])) while (i < end && isDigit(buf[i])) i += 1;
  else return -1;
  if (buf[i] === 0x2e) {
    i += 1;
    if (!isDigit(buf[i])) return -1;
    while (i < end && isDigit(buf[i])) i += 1;
  }
  if (buf[i] === 0x65 || buf[i] === 0x45) {
    i += 1;
    if (buf[i] === 0x2b || buf[i] === 0x2d) i += 1;
    if (!isDigit(buf[i])) return -1;
    while (i < end && isDigit(buf[i])) i += 1;
  }
  return i > end ? -1 : i;
}

/**
 * Kind of the scalar `scalarEnd` just scanned. Kept in a module variable rather than returned in an
 * object: origin answers hold hundreds of thousands of scalars, and an object per scalar is most of the
 * scanner's cost (allocation and GC) on large bodies.
 */
export let scannedKind: JsonKind = 'null';

/** End offset of the scalar starting at `i` (its kind in `scannedKind`), or -1. */
export function scalarEnd(buf: Uint8Array, i: number, end: number): number {
  const c = buf[i];
  if (c === QUOTE) {
    scannedKind = 'string';
    return stringEnd(buf, i, end);
  }
  if (c === 0x2d || isDigit(c)) {
    scannedKind = 'number';
    return numberEnd(buf, i, end);
  }
  // true / false / null, compared byte by byte
  if (c === 0x74 && i + 4 <= end && buf[i + 1] === 0x72 && buf[i + 2] === 0x75 && buf[i + 3] === 0x65) {
    scannedKind = 'true';
    return i + 4;
  }
  if (
    c === 0x66 &&
    i + 5 <= end &&
    buf[i + 1] === 0x61 &&
    buf[i + 2] === 0x6c &&
    buf[i + 3] === 0x73 &&
    buf[i + 4] === 0x65
  ) {
    scannedKind = 'false';
    return i + 5;
  }
  if (c === 0x6e && i + 4 <= end && buf[i + 1] === 0x75 && buf[i + 2] === 0x6c && buf[i + 3] === 0x6c) {
    scannedKind = 'null';
    return i + 4;
  }
  return -1;
}

/** The key `"jsonrpc"` at `i`, quotes and all (the one-pass readers match their keys unrolled, byte by byte). */
export function isJsonrpcKey(b: Uint8Array, i: number): boolean {
  return (
    b[i] === QUOTE &&
    b[i + 1] === 0x6a &&
    b[i + 2] === 0x73 &&
    b[i + 3] === 0x6f &&
    b[i + 4] === 0x6e &&
    b[i + 5] === 0x72 &&
    b[i + 6] === 0x70 &&
    b[i + 7] === 0x63 &&
    b[i + 8] === QUOTE
  );
}

/** The key `"id"` at `i`, quotes and all. */
export function isIdKey(b: Uint8Array, i: number): boolean {
  return b[i] === QUOTE && b[i + 1] === 0x69 && b[i + 2] === 0x64 && b[i + 3] === QUOTE;
}

/** The JSON-RPC version string `"2.0"` at `i`, exactly as written (the one-pass readers' check). */
export function isVersion20(buf: Uint8Array, i: number): boolean {
  return buf[i] === QUOTE && buf[i + 1] === 0x32 && buf[i + 2] === 0x2e && buf[i + 3] === 0x30 && buf[i + 4] === QUOTE;
}

/** Open containers of valueEnd (true: object), reused: its depth is only bounded by the input. */
const open: boolean[] = [];

/**
 * End offset of the JSON value starting at `i` (no whitespace before it), or -1 when the bytes from `i`
 * are not one value — or nest arrays and objects more than `maxDepth` deep (the value itself, when one,
 * is depth 1). Validates like scanJson, records nothing: for values that are only passed on or parsed
 * afterwards. Nesting is tracked in `open`, so deep input cannot overflow the call stack.
 */
export function valueEnd(buf: Uint8Array, i: number, end: number, maxDepth = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  for (;;) {
    // A value starts at i.
    const c = buf[i];
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth >= maxDepth) return -1;
      const object = c === OPEN_OBJECT;
      i = skipSpace(buf, i + 1, end);
      if (buf[i] === (object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        i += 1;
      } else {
        open[depth] = object;
        depth += 1;
        i = object ? memberValue(buf, i, end) : i;
        if (i < 0) return -1;
        continue;
      }
    } else {
      i = scalarEnd(buf, i, end);
      if (i < 0) return -1;
    }
    // A value ended at i: close containers until one continues with a comma.
    for (;;) {
      if (depth === 0) return i;
      i = skipSpace(buf, i, end);
      const object = open[depth - 1] as boolean;
      const d = buf[i];
      if (d === COMMA) {
        i = skipSpace(buf, i + 1, end);
        if (object) i = memberValue(buf, i, end);
        if (i < 0) return -1;
        break;
      }
      if (d !== (object ? CLOSE_OBJECT : CLOSE_ARRAY) || i >= end) return -1;
      depth -= 1;
      i += 1;
    }
  }
}

/** From a member's key at `i` to the start of its value (past the colon and whitespace), or -1. */
function memberValue(buf: Uint8Array, i: number, end: number): number {
  if (buf[i] !== QUOTE) return -1;
  i = stringEnd(buf, i, end);
  if (i < 0) return -1;
  i = skipSpace(buf, i, end);
  if (buf[i] !== COLON) return -1;
  return skipSpace(buf, i + 1, end);
}
