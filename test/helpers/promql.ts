/**
 * The series a PromQL expression reads, for tests that check rules and dashboards against /metrics: the
 * metric names left once label matchers, strings, ranges, grouping label lists, function calls, keywords
 * and numbers are taken out. Good for the expressions we write, not a PromQL parser.
 */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
]);

export function seriesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // strings (label values, including regexes)
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // grouping labels
    .replace(/\$\{?[a-zA-Z_]+\}?/g, ' '); // Grafana variables
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?/g)) {
    const [whole, name] = [match[0], match[0].replace(/\s*\($/, '')];
    if (whole.endsWith('(')) continue; // a function (or an aggregation before its grouping)
    if (KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}

/** A histogram's series back to its family: `x_bucket`, `x_sum`, `x_count` → `x` when `x` is one. */
export function familyOf(series: string, families: ReadonlyMap<string, string>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (series.endsWith(suffix)) {
      const base = series.slice(0, -suffix.length);
      if (families.get(base) === 'histogram') return base;
    }
  }
  return series;
}
