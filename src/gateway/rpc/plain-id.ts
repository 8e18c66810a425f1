/**
 * Plain ids: the ids a client's batch may go upstream with as the client wrote it (BatchRequest.asIs) —
 * a decimal integer without sign, fraction or leading zero (at most 15 digits, which every JSON parser
 * keeps exact), or a string without escapes, at most MAX_PLAIN_ID bytes with its quotes. Origins echo
 * such ids byte for byte, so answers can be matched back by them.
 */

/** Longest id text that may go upstream as the client wrote it. */
const MAX_PLAIN_ID = 64;

/** Whether the id at [start, end) of `buf` (a valid JSON string or number) is plain. */
function isPlainId(buf: Uint8Array, start: number, end: number): boolean {
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

/** The value of a plain numeric id's digits (at most 15: exact). */
function digitsValue(buf: Uint8Array, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i += 1) value = value * 10 + ((buf[i] as number) - 0x30);
  return value;
}

/**
 * A batch's ids as they are read, while each is plain and unique; false from the first that is not (or a
 * notification: `missing`). Rising numbers — what clients send — need no set to be unique. `text` is the
 * latin1 text of `body` (ids are matched byte for byte).
 */
export class PlainIds {
  texts: string[] | false = [];
  #last = -1;
  #seen: Set<string> | undefined;

  add(body: Buffer, text: string, start: number, end: number): void {
    const texts = this.texts;
    if (texts === false) return;
    if (!isPlainId(body, start, end)) {
      this.texts = false;
      return;
    }
    const id = text.slice(start, end);
    const number = body[start] === 0x22 ? -1 : digitsValue(body, start, end);
    if (this.#seen === undefined && number > this.#last) {
      this.#last = number;
    } else {
      this.#seen ??= new Set(texts);
      if (this.#seen.has(id)) {
        this.texts = false;
        return;
      }
      this.#seen.add(id);
    }
    texts.push(id);
  }

  /** A call without an id: the batch has no plain ids. */
  missing(): void {
    this.texts = false;
  }
}
