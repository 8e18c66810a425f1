/**
 * "Did you mean …?" for the config check: the known name closest to a misspelt one, within an edit
 * distance of 2 (insertions, deletions, substitutions and swaps of two neighbours each count 1; case
 * counts too, so `Mainnet` is 1 from `mainnet`). Ties go to the first candidate given.
 */

export const MAX_SUGGESTION_DISTANCE = 2;

/** The optimal-string-alignment distance between `a` and `b`, or Infinity once it must exceed `max`. */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > max) return Number.POSITIVE_INFINITY;
  // Three rows of the dynamic-programming table: two back (for swaps), one back, this one.
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (before[j - 2] as number) + 1);
      }
      row.push(value);
      best = Math.min(best, value);
    }
    if (best > max) return Number.POSITIVE_INFINITY;
    before = previous;
    previous = row;
  }
  const distance = previous[b.length] as number;
  return distance > max ? Number.POSITIVE_INFINITY : distance;
}

/** The candidate closest to `word` within MAX_SUGGESTION_DISTANCE (never `word` itself), or undefined. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let found: string | undefined;
  let best = MAX_SUGGESTION_DISTANCE + 1;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const distance = editDistance(word, candidate, MAX_SUGGESTION_DISTANCE);
    if (distance < best) {
      best = distance;
      found = candidate;
    }
  }
  return found;
}

/** "; did you mean `x`?" when a candidate is close to `word`, else ''. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const found = closest(word, candidates);
  return found === undefined ? '' : meant(found);
}

/** The suggestion's words: "; did you mean `name`?". */
export function meant(name: string): string {
  return `; did you mean \`${name}\`?`;
}
