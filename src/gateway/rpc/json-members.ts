/**
 * The first object member given twice in a JSON text, at any depth, named by its path — for readers
 * that must refuse such a text rather than let JSON.parse keep the last copy (the management API's
 * bodies, api/body.ts; the gateway refuses a request member given twice itself, request.ts): a client
 * and the server could disagree about which copy counts. Keys are compared decoded, so `"name"` and
 * `"n\u0061me"` are the same member. Built on the gateway's lexer (json-lex.ts); nesting is tracked
 * with an explicit stack, so deep input cannot overflow the call stack. The text is expected to be
 * valid JSON (the caller parsed it first); malformed input answers undefined.
 */
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  OPEN_ARRAY,
  OPEN_OBJECT,
  scalarEnd,
  skipSpace,
  stringEnd,
} from './json-lex.js';
import { decodeKey } from './json-scan.js';

/** One open container: an object's keys so far (undefined for an array) and the current index. */
interface Open {
  readonly keys: Set<string> | undefined;
  index: number;
}

/** The path (member names and array indexes) of the first member its object has twice, or undefined. */
export function duplicateMember(buf: Uint8Array): string[] | undefined {
  const end = buf.length;
  const open: Open[] = [];
  /** The current member name or index of each open container. */
  const path: string[] = [];
  let duplicate: string[] | undefined;
  /** Reads the key at `i` into the innermost object; the offset of its value, or -1 (malformed or a duplicate). */
  const member = (i: number): number => {
    const keyEnd = stringEnd(buf, i, end);
    if (keyEnd < 0) return -1;
    const key = decodeKey(buf, i, keyEnd);
    const keys = (open.at(-1) as Open).keys as Set<string>;
    path[path.length - 1] = key;
    if (keys.has(key)) {
      duplicate = [...path];
      return -1;
    }
    keys.add(key);
    const colon = skipSpace(buf, keyEnd, end);
    return buf[colon] === COLON ? skipSpace(buf, colon + 1, end) : -1;
  };
  let i = skipSpace(buf, 0, end);
  for (;;) {
    // A value starts at i.
    const c = buf[i];
    const object = c === OPEN_OBJECT;
    if (object || c === OPEN_ARRAY) {
      i = skipSpace(buf, i + 1, end);
      if (buf[i] !== (object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        open.push({ keys: object ? new Set() : undefined, index: 0 });
        path.push('0');
        if (object) i = member(i);
        if (i < 0) return duplicate;
        continue;
      }
      i += 1;
    } else {
      i = scalarEnd(buf, i, end);
      if (i < 0) return undefined;
    }
    // A value ended at i: close containers until one continues with a comma.
    for (;;) {
      const inner = open.at(-1);
      if (inner === undefined) return undefined;
      i = skipSpace(buf, i, end);
      if (buf[i] === COMMA) {
        i = skipSpace(buf, i + 1, end);
        inner.index += 1;
        if (inner.keys !== undefined) i = member(i);
        else path[path.length - 1] = String(inner.index);
        if (i < 0) return duplicate;
        break;
      }
      if (i >= end) return undefined;
      open.pop();
      path.pop();
      i += 1;
    }
  }
}
