/**
 * Control characters in text that people read: names and descriptions of pools, origins, monitors,
 * policies, webhook destinations and tokens. Such text ends up on one line of an alert email, in an email
 * subject, in a log line, in a webhook's `text`: a CR or LF in an origin name would let whoever names it
 * forge lines there, so it is refused on input and escaped on output.
 *
 * "Control character" here: C0 (U+0000–U+001F, tab included), DEL (U+007F), C1 (U+0080–U+009F) and the
 * Unicode line and paragraph separators (U+2028, U+2029), which some mail and chat clients break lines on.
 * Header values keep their own, HTTP-shaped rule (model/pool-schema.ts `headerMap`: tab allowed).
 */
import { z } from 'zod';

function isControl(code: number): boolean {
  return code <= 0x1f || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
}

export const NO_CONTROL_CHARACTERS = 'may not contain control characters (CR, LF, tab, NUL, …)';

export function hasControlCharacters(value: string): boolean {
  for (let i = 0; i < value.length; i++) if (isControl(value.charCodeAt(i))) return true;
  return false;
}

/** A string schema that refuses control characters; bounds are added by the caller (`.min`, `.max`). */
export function plainText(): z.ZodString {
  return z.string().refine((value) => !hasControlCharacters(value), NO_CONTROL_CHARACTERS);
}

/**
 * `value` fit for one line of a message: each control character becomes its `\uXXXX` escape, so the text
 * stays recognisable and nothing stored before input was checked can start a new line or header.
 */
export function oneLine(value: string): string {
  if (!hasControlCharacters(value)) return value;
  let out = '';
  for (const char of value) {
    const code = char.charCodeAt(0);
    out += isControl(code) ? `\\u${code.toString(16).padStart(4, '0')}` : char;
  }
  return out;
}
