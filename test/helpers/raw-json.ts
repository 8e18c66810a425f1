/**
 * Raw JSON text for tests that compare ids byte for byte: the elements of a top-level array and the
 * members of a top-level object as the exact text the sender wrote (no number parsing, no re-serialising),
 * so `1e400`, `-0` or `123456789012345678901234567890` stay what they were. Written for this purpose and
 * independent of the gateway's own scanner (src/gateway/rpc/json-scan.ts), so a test does not check the
 * gateway with its own code. Assumes well-formed JSON; throws on anything it cannot walk.
 */

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

function skipWhitespace(text: string, i: number): number {
  let at = i;
  while (at < text.length && WHITESPACE.has(text[at] as string)) at += 1;
  return at;
}

/** The index just past the JSON value that starts at `i` (whitespace before it skipped). */
function valueEnd(text: string, i: number): number {
  const at = skipWhitespace(text, i);
  const first = text[at];
  if (first === '"') return stringEnd(text, at);
  if (first === '{' || first === '[') {
    const close = first === '{' ? '}' : ']';
    let next = skipWhitespace(text, at + 1);
    if (text[next] === close) return next + 1;
    for (;;) {
      if (first === '{') {
        next = skipWhitespace(text, stringEnd(text, skipWhitespace(text, next)));
        if (text[next] !== ':') throw new Error(`raw-json: ":" expected at ${next}`);
        next += 1;
      }
      next = skipWhitespace(text, valueEnd(text, next));
      if (text[next] === close) return next + 1;
      if (text[next] !== ',') throw new Error(`raw-json: "," or "${close}" expected at ${next}`);
      next += 1;
    }
  }
  // A number or a literal: up to the next delimiter.
  let end = at;
  while (end < text.length && !/[\s,\]}:]/.test(text[end] as string)) end += 1;
  if (end === at) throw new Error(`raw-json: a value expected at ${at}`);
  return end;
}

function stringEnd(text: string, i: number): number {
  if (text[i] !== '"') throw new Error(`raw-json: a string expected at ${i}`);
  let at = i + 1;
  while (at < text.length) {
    const c = text[at];
    if (c === '\\') at += 2;
    else if (c === '"') return at + 1;
    else at += 1;
  }
  throw new Error('raw-json: unterminated string');
}

/** The raw text of each element of a top-level JSON array. */
export function rawElements(text: string): string[] {
  const start = skipWhitespace(text, 0);
  if (text[start] !== '[') throw new Error(`raw-json: not an array: ${text.slice(0, 80)}`);
  const out: string[] = [];
  let next = skipWhitespace(text, start + 1);
  if (text[next] === ']') return out;
  for (;;) {
    const from = skipWhitespace(text, next);
    const end = valueEnd(text, from);
    out.push(text.slice(from, end));
    next = skipWhitespace(text, end);
    if (text[next] === ']') return out;
    if (text[next] !== ',') throw new Error(`raw-json: "," or "]" expected at ${next}`);
    next += 1;
  }
}

/** The raw text of the top-level object's member `key` (the first one), or undefined. */
export function rawMember(text: string, key: string): string | undefined {
  const start = skipWhitespace(text, 0);
  if (text[start] !== '{') return undefined;
  let next = skipWhitespace(text, start + 1);
  if (text[next] === '}') return undefined;
  for (;;) {
    const keyStart = skipWhitespace(text, next);
    const keyEnd = stringEnd(text, keyStart);
    const colon = skipWhitespace(text, keyEnd);
    const valueStart = skipWhitespace(text, colon + 1);
    const end = valueEnd(text, valueStart);
    if ((JSON.parse(text.slice(keyStart, keyEnd)) as string) === key) return text.slice(valueStart, end);
    next = skipWhitespace(text, end);
    if (text[next] === '}') return undefined;
    next += 1;
  }
}
