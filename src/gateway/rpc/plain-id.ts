/**
 * Plain ids: the ids a client's batch may go upstream with as the client wrote it (BatchRequest.asIs) —
 * a decimal integer without sign, fraction or leading zero (at most 15 digits, which every JSON parser
 * keeps exact), or a string without escapes, at most MAX_PLAIN_ID bytes with its quotes. Origins echo
 * such ids byte for byte, so answers can be matched back by them.
 */

/** Longest id text that may go upstream as the client wrote it. */
const MAX_PLAIN_ID = 64;

/** Whether the id at [start, end) of `buf` (a valid JSON string or number) is plain. */
export function isPlainId(buf: Uint8Array, start: number, end: number): boolean {
  const first = buf[start];
  if (first === 0x22) {
    if (end - start > MAX_PLAIN_ID) return false;
    for (let i = start + 1; i < end - 1; i += 1) if (buf[i] === 0x5c) return false;
    return true;
  }
  if (end - start > 15 || (first === 0x30 && end - start > 1)) return false;
  for (let i = start; i < end; i += 1) {
    const c = buf[i] as number;
    if (c < 0x30 || c > 0x39) return false;
  }
  return end > start;
}
