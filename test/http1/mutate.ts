/**
 * A small seeded mutator of HTTP/1.1 requests for randomized tests: `mulberry32(seed)` (the one seeded
 * source of the tests, ../helpers/seeded-rng.ts) is deterministic (same seed, same sequence, so a
 * failure is replayed from its seed) and `mutate` applies 1–4 edits to a request. Half the edits are blind byte edits (flip, insert, delete,
 * duplicate a range); the other half know the syntax: they break or duplicate a line, move a space
 * around a colon, change a line ending, or splice in a header that decides framing (Content-Length,
 * Transfer-Encoding, Connection, Host). Blind edits find parser crashes; syntax-aware ones reach the
 * framing decisions that blind edits almost never hit.
 */

import { mulberry32 } from '../helpers/seeded-rng.js';

export { mulberry32 };
export type Random = ReturnType<typeof mulberry32>;

/** Bytes where parsers tend to disagree: CR, LF, NUL, SP, HTAB, ':', ',', ';', DEL, 0xFF, digits, a letter, '-'. */
export const NASTY = [0x0d, 0x0a, 0x00, 0x20, 0x09, 0x3a, 0x2c, 0x3b, 0x7f, 0xff, 0x30, 0x39, 0x61, 0x2d];

/** Header lines that change how a request is framed or kept, spliced in by `mutate`. */
const FRAMING_LINES = [
  'Content-Length: 0',
  'Content-Length: 3',
  'Content-Length: 03',
  'Content-Length: 3, 3',
  'Content-Length: -1',
  'Transfer-Encoding: chunked',
  'Transfer-Encoding: gzip, chunked',
  'Transfer-Encoding: chunked, gzip',
  'Transfer-Encoding: identity',
  'Transfer-Encoding:  CHUNKED ',
  'Connection: close',
  'Connection: keep-alive',
  'Connection: upgrade',
  'Upgrade: websocket',
  'Host: y',
  'Expect: 100-continue',
];

function pick<T>(items: readonly T[], random: Random): T {
  return items[Math.floor(random() * items.length)] as T;
}

function splice(bytes: Buffer, at: number, remove: number, insert: Buffer | string): Buffer {
  const piece = typeof insert === 'string' ? Buffer.from(insert, 'latin1') : insert;
  return Buffer.concat([bytes.subarray(0, at), piece, bytes.subarray(at + remove)]);
}

/** Offsets just after each LF (line starts), the first line excluded. */
function lineStarts(bytes: Buffer): number[] {
  const starts: number[] = [];
  for (let i = bytes.indexOf(0x0a); i !== -1 && i + 1 < bytes.length; i = bytes.indexOf(0x0a, i + 1)) {
    starts.push(i + 1);
  }
  return starts;
}

/** One edit at a random place; a syntax-aware edit with nowhere to apply falls back to a byte flip. */
function edit(bytes: Buffer, random: Random): Buffer {
  const at = Math.floor(random() * bytes.length);
  const kind = Math.floor(random() * 8);
  switch (kind) {
    case 0: {
      const copy = Buffer.from(bytes);
      copy[at] = pick(NASTY, random);
      return copy;
    }
    case 1:
      return splice(bytes, at, 0, Buffer.from([pick(NASTY, random)]));
    case 2:
      return splice(bytes, at, 1 + Math.floor(random() * 8), '');
    case 3: {
      const end = Math.min(bytes.length, at + 1 + Math.floor(random() * 40));
      return splice(bytes, end, 0, Buffer.from(bytes.subarray(at, end)));
    }
    case 4: {
      // Splice a framing header in at the start of a line.
      const starts = lineStarts(bytes);
      if (starts.length === 0) break;
      return splice(bytes, pick(starts, random), 0, `${pick(FRAMING_LINES, random)}\r\n`);
    }
    case 5: {
      // Duplicate a whole line (a second Content-Length, Host, Transfer-Encoding…).
      const starts = lineStarts(bytes);
      if (starts.length === 0) break;
      const start = pick(starts, random);
      const end = bytes.indexOf(0x0a, start);
      if (end === -1) break;
      return splice(bytes, start, 0, Buffer.from(bytes.subarray(start, end + 1)));
    }
    case 6: {
      // CRLF → LF, LF → CRLF, or CRLF → CR.
      const lf = bytes.indexOf(0x0a, at);
      if (lf === -1) break;
      if (lf > 0 && bytes[lf - 1] === 0x0d)
        return random() < 0.5 ? splice(bytes, lf - 1, 1, '') : splice(bytes, lf, 1, '');
      return splice(bytes, lf, 0, '\r');
    }
    case 7: {
      // A space or tab around a colon, or a header name's case changed.
      const colon = bytes.indexOf(0x3a, at);
      if (colon === -1) break;
      const choice = Math.floor(random() * 3);
      if (choice === 0) return splice(bytes, colon, 0, random() < 0.5 ? ' ' : '\t');
      if (choice === 1) return splice(bytes, colon + 1, 0, random() < 0.5 ? '\t' : '   ');
      const copy = Buffer.from(bytes);
      for (let i = colon - 1; i >= 0 && copy[i] !== 0x0a; i -= 1) {
        const c = copy[i] as number;
        if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) copy[i] = c ^ 0x20;
      }
      return copy;
    }
  }
  const copy = Buffer.from(bytes);
  copy[at] = pick(NASTY, random);
  return copy;
}

/** 1–4 random edits of `input` (a new buffer; `input` is not changed). */
export function mutate(input: Buffer, random: Random): Buffer {
  let bytes: Buffer = Buffer.from(input);
  const edits = 1 + Math.floor(random() * 4);
  for (let e = 0; e < edits && bytes.length > 0; e += 1) bytes = edit(bytes, random);
  return bytes;
}
