/**
 * `expected_codes` as Cloudflare writes it: comma-separated three-character patterns where `x` matches
 * any digit ("200", "2xx", "200,301", "30x"). Case-insensitive. An empty string matches nothing.
 */
export function matchesExpectedCodes(status: number, expected: string): boolean {
  const code = String(status);
  return expected
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part.length === 3)
    .some((pattern) => [...pattern].every((char, i) => char === 'x' || char === code[i]));
}
