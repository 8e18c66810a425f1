/**
 * Damaged JSON for reader tests: now and then (about one body in five) the text cut short, one byte
 * replaced, or bytes added at the end; otherwise the text unchanged. Drawn from the caller's Rng, so a
 * seed names the damage too.
 */
import type { Rng } from './seeded-rng.js';

const REPLACEMENTS = ['"', ',', '}', ']', '{', '\\', 'x', '\u0000', '\u0001'];
const TAILS = [',', '[]', 'x', '\u00ff'];

export function damaged(rng: Rng, text: string): string {
  const kind = rng.int(15);
  if (kind === 0) return text.slice(0, rng.int(text.length));
  if (kind === 1) {
    const at = rng.int(text.length);
    return text.slice(0, at) + rng.pick(REPLACEMENTS) + text.slice(at + 1);
  }
  if (kind === 2) return text + rng.pick(TAILS);
  return text;
}
