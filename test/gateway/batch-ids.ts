/**
 * JSON-RPC ids for the batch generator (batch-generator.ts), as raw JSON text: the gateway must give
 * each back byte for byte (docs/gateway.md "Ids, byte for byte"), so they include what a JS number or
 * a re-serialised string would change: numbers past 2^53 and 2^64, 1e400, -0, fractions and
 * exponents, strings with every kind of escape, and null.
 */
import type { Rng } from '../helpers/seeded-rng.js';

export const ODD_IDS = [
  '123456789012345678901234567890',
  '18446744073709551616',
  '9007199254740993',
  '1e400',
  '-1e400',
  '1E+2',
  '-0',
  '0',
  '-7',
  '0.5',
  '-2.5e-3',
  'null',
  '""',
  '"é"',
  '"\\u0000"',
  '"a\\"b\\\\c\\/d\\n\\t\\u00e9\\ud83d\\ude00"',
  '"1"',
];
/** Pieces of generated string ids: plain, escaped and multi-byte characters. */
const STRING_PIECES = [
  'a',
  'Z',
  '9',
  ' ',
  '\\"',
  '\\\\',
  '\\/',
  '\\n',
  '\\r',
  '\\u00e9',
  '\\ud83d\\ude00',
  'é',
  '€',
  '-',
];

/** A number 15–75 digits long, sometimes negative, fractional or with an exponent. */
export function longNumberId(rng: Rng): string {
  let digits = String(1 + rng.int(9));
  const length = 15 + rng.int(60);
  while (digits.length < length) digits += String(rng.int(10));
  const sign = rng.chance(0.3) ? '-' : '';
  const fraction = rng.chance(0.3) ? `.${rng.int(1000)}` : '';
  const exponent = rng.chance(0.3) ? `e${rng.pick(['', '+', '-'])}${rng.int(500)}` : '';
  return `${sign}${digits}${fraction}${exponent}`;
}

/** A string of 1–30 pieces (1 time in 5 up to 400), escapes included. */
export function longStringId(rng: Rng): string {
  const length = 1 + rng.int(rng.chance(0.2) ? 400 : 30);
  let text = '';
  for (let i = 0; i < length; i += 1) text += rng.pick(STRING_PIECES);
  return `"${text}"`;
}
