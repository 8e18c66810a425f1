/**
 * Byte classes of HTTP/1.1 (RFC 9110 / 9112) shared by the listener's request parser (wire/) and the
 * origin client's response parser (origin-http/), so both read the same bytes the same way.
 */

export const CR = 13;
export const LF = 10;
export const SP = 32;
export const HTAB = 9;

/** tchar of RFC 9110 §5.6.2: 1 for bytes allowed in a token (a header name, a method). */
export const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TCHAR[c.charCodeAt(0)] = 1;
}

/** Hex digit values; -1 for any other byte. */
export const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i += 1) {
  HEX['0123456789abcdef'.charCodeAt(i)] = i;
  HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
}

/** A field value or reason phrase byte: HTAB, SP, VCHAR, obs-text (no other control byte, no DEL). */
export function isTextChar(c: number): boolean {
  return c === HTAB || (c >= SP && c !== 0x7f);
}

/** `value` as a number when it is 1 to `maxDigits` decimal digits and nothing else (no sign, no space); else -1. */
export function decimalDigits(value: string, maxDigits: number): number {
  const length = value.length;
  if (length === 0 || length > maxDigits) return -1;
  let n = 0;
  for (let i = 0; i < length; i += 1) {
    const d = value.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}
