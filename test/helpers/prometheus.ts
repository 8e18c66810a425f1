/**
 * The Prometheus text format (0.0.4) as tests read it: every sample with its name, labels and value, and
 * the TYPE of each family. Strict enough to fail on a malformed line.
 */
export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface PromText {
  readonly samples: readonly PromSample[];
  /** Family name → counter | gauge | histogram. */
  readonly types: ReadonlyMap<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy;

export function parseProm(text: string): PromText {
  const samples: PromSample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ');
      types.set(name as string, type as string);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? '';
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const label = LABEL.exec(body);
      if (label === null) throw new Error(`bad labels in: ${line}`);
      labels[label[1] as string] = (label[2] as string).replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
    }
    const raw = match[3] as string;
    const value = raw === '+Inf' ? Number.POSITIVE_INFINITY : raw === '-Inf' ? Number.NEGATIVE_INFINITY : Number(raw);
    samples.push({ name: match[1] as string, labels, value });
  }
  return { samples, types };
}

/** The samples of `name` whose labels include every one of `where`. */
export function samplesOf(prom: PromText, name: string, where: Record<string, string> = {}): PromSample[] {
  return prom.samples.filter(
    (s) => s.name === name && Object.entries(where).every(([key, value]) => s.labels[key] === value),
  );
}

/** The sum of `name`'s samples matching `where` (0 when none). */
export function sumOf(prom: PromText, name: string, where: Record<string, string> = {}): number {
  return samplesOf(prom, name, where).reduce((sum, s) => sum + s.value, 0);
}

export async function scrape(apiUrl: string): Promise<PromText> {
  const base = apiUrl.replace(/\/client\/v4\/?$/, '');
  const res = await fetch(`${base}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return parseProm(await res.text());
}
