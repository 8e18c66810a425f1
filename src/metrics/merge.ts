/**
 * Renders several registries' metrics as one Prometheus text (format 0.0.4): the control process's own
 * and each gateway worker's (SPEC §11 "/metrics sums all workers"). Families merge by name; samples with
 * the same labels are summed — counters and gauges (connections open, bytes cached: the whole's value is
 * the sum of the parts), histograms bucket by bucket with their sum and count; a family marked
 * `merge: 'max'` (registry.ts MergeRule) keeps the largest sample instead. The first family of a name
 * gives its help and type; a later family of the same name with another type, or a histogram with other
 * buckets, is left out (one code base registers each name once, so this only guards against skew).
 */
import { formatLabels, formatValue, type HistogramData, type Labels, type MetricFamily } from './registry.js';

interface Merged {
  family: MetricFamily;
  samples: Map<string, { labels: Labels; value: number }>;
  series: Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>;
}

export function renderMerged(sources: readonly (readonly MetricFamily[])[]): string {
  const merged = new Map<string, Merged>();
  for (const families of sources) {
    for (const family of families) {
      let into = merged.get(family.name);
      if (into === undefined) {
        into = { family, samples: new Map(), series: new Map() };
        merged.set(family.name, into);
      } else if (into.family.type !== family.type || !sameBuckets(into.family.buckets, family.buckets)) {
        continue;
      }
      if (family.type === 'histogram') addSeries(into, family.series ?? []);
      else
        for (const sample of family.samples) {
          const key = keyOf(family.labelNames, sample.labels);
          const held = into.samples.get(key);
          if (held === undefined) into.samples.set(key, { labels: sample.labels, value: sample.value });
          else
            held.value = into.family.merge === 'max' ? Math.max(held.value, sample.value) : held.value + sample.value;
        }
    }
  }
  return [...merged.values()].map(render).join('');
}

function addSeries(into: Merged, series: readonly HistogramData[]): void {
  for (const s of series) {
    const key = keyOf(into.family.labelNames, s.labels);
    const held = into.series.get(key);
    if (held === undefined) {
      into.series.set(key, { labels: s.labels, counts: [...s.counts], sum: s.sum, count: s.count });
      continue;
    }
    for (let i = 0; i < held.counts.length; i += 1) held.counts[i] = (held.counts[i] ?? 0) + (s.counts[i] ?? 0);
    held.sum += s.sum;
    held.count += s.count;
  }
}

function render({ family, samples, series }: Merged): string {
  const { name } = family;
  let out = `# HELP ${name} ${family.help.replace(/\n/g, ' ')}\n# TYPE ${name} ${family.type}\n`;
  if (family.type !== 'histogram') {
    for (const s of samples.values()) out += `${name}${formatLabels(s.labels)} ${formatValue(s.value)}\n`;
    return out;
  }
  const buckets = family.buckets ?? [];
  for (const s of series.values()) {
    for (const [i, bound] of buckets.entries()) {
      out += `${name}_bucket${formatLabels({ ...s.labels, le: String(bound) })} ${s.counts[i] ?? 0}\n`;
    }
    out += `${name}_bucket${formatLabels({ ...s.labels, le: '+Inf' })} ${s.count}\n`;
    out += `${name}_sum${formatLabels(s.labels)} ${formatValue(s.sum)}\n`;
    out += `${name}_count${formatLabels(s.labels)} ${s.count}\n`;
  }
  return out;
}

function keyOf(names: readonly string[], labels: Labels): string {
  return names.map((name) => labels[name] ?? '').join('\u0000');
}

function sameBuckets(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((bound, i) => bound === b[i]);
}
