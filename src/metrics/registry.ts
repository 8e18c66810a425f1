/**
 * A small Prometheus registry (text exposition format 0.0.4), served at the API listener's `/metrics`.
 *
 * One registry per running Switchyard (created in `main.ts`, handed to each part), so apps started
 * side by side in one test process do not share counters. Registering is idempotent: asking twice
 * for the same name returns the same metric, so modules may register lazily without coordination.
 *
 *   const requests = metrics.counter('switchyard_gateway_requests_total', 'Gateway requests', ['network']);
 *   requests.inc({ network: 'sepolia' });
 *   metrics.gauge('switchyard_pools', 'Pools in the store', [], () => directory.allPools().length);
 *
 * Label values must not carry secrets or another account's data: the endpoint needs no token.
 */
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  labels: Labels;
  value: number;
}

type Collect = () => number | readonly Sample[];

/**
 * How the control process adds up a family that several processes report (merge.ts): `sum` (the
 * default: requests, bytes, memory — the whole is the sum of the parts) or `max` (e.g. the event loop's
 * lag: the worst process is what an alert wants).
 */
export type MergeRule = 'sum' | 'max';

/** A metric read at scrape time rather than counted: `collect` gives its value(s); `merge` as above. */
export interface CollectOptions {
  readonly collect?: Collect;
  readonly merge?: MergeRule;
}

/**
 * One metric as plain data (what a gateway worker sends its control process at scrape time, SPEC §11;
 * merge.ts sums them): samples for counters and gauges, buckets and series for histograms.
 */
export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly labelNames: readonly string[];
  readonly samples: readonly Sample[];
  /** Histograms: upper bounds, ascending (without +Inf). */
  readonly buckets?: readonly number[];
  /** Histograms: cumulative counts per bucket, sum and count per label set. */
  readonly series?: readonly HistogramData[];
  /** How processes' samples of it add up (default `sum`). */
  readonly merge?: MergeRule;
}

export interface HistogramData {
  readonly labels: Labels;
  readonly counts: readonly number[];
  readonly sum: number;
  readonly count: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

abstract class Metric {
  readonly #values = new Map<string, Sample>();
  readonly #collect: Collect | undefined;
  readonly #merge: MergeRule | undefined;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge' | 'histogram',
    readonly labelNames: readonly string[],
    options: CollectOptions = {},
  ) {
    this.#collect = options.collect;
    this.#merge = options.merge;
  }

  protected add(labels: Labels, delta: number, replace: boolean): void {
    const sample = this.sample(labels);
    sample.value = replace ? delta : sample.value + delta;
  }

  /** The sample of these labels, created at 0 on first use (a bound series keeps it). */
  protected sample(labels: Labels): Sample {
    const key = labelKey(this.labelNames, labels);
    let sample = this.#values.get(key);
    if (sample === undefined) {
      sample = { labels: pick(this.labelNames, labels), value: 0 };
      this.#values.set(key, sample);
    }
    return sample;
  }

  samples(): readonly Sample[] {
    if (this.#collect === undefined) return [...this.#values.values()];
    const collected = this.#collect();
    return typeof collected === 'number' ? [{ labels: {}, value: collected }] : collected;
  }

  family(): MetricFamily {
    const samples = this.samples().map((s) => ({ labels: { ...s.labels }, value: s.value }));
    const family = { name: this.name, help: this.help, type: this.type, labelNames: [...this.labelNames], samples };
    return this.#merge === undefined ? family : { ...family, merge: this.#merge };
  }

  render(): string {
    const head = `# HELP ${this.name} ${this.help.replace(/\n/g, ' ')}\n# TYPE ${this.name} ${this.type}\n`;
    return (
      head +
      this.samples()
        .map((s) => `${this.name}${formatLabels(s.labels)} ${formatValue(s.value)}\n`)
        .join('')
    );
  }
}

export class Counter extends Metric {
  inc(labels: Labels = {}, value = 1): void {
    if (value < 0) throw new Error(`counter ${this.name} cannot decrease`);
    this.add(labels, value, false);
  }

  /**
   * One series bound to its labels, for hot paths: `inc` then skips building the label key. The series
   * is created (and rendered) on its first increment, as with `inc(labels)`.
   */
  series(labels: Labels): { inc(value?: number): void } {
    let sample: Sample | undefined;
    return {
      inc: (value = 1) => {
        if (value < 0) throw new Error(`counter ${this.name} cannot decrease`);
        sample ??= this.sample(labels);
        sample.value += value;
      },
    };
  }
}

export class Gauge extends Metric {
  constructor(name: string, help: string, labelNames: readonly string[], options?: CollectOptions) {
    super(name, help, 'gauge', labelNames, options);
  }

  set(labels: Labels, value: number): void {
    this.add(labels, value, true);
  }

  inc(labels: Labels = {}, value = 1): void {
    this.add(labels, value, false);
  }

  dec(labels: Labels = {}, value = 1): void {
    this.add(labels, -value, false);
  }
}

interface HistogramSeries {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

function record(buckets: readonly number[], series: HistogramSeries, value: number): void {
  const counts = series.counts;
  for (let i = 0; i < buckets.length; i += 1)
    if (value <= (buckets[i] as number)) counts[i] = (counts[i] as number) + 1;
  series.sum += value;
  series.count += 1;
}

/** Cumulative buckets; observe values in seconds (Prometheus convention). */
export class Histogram extends Metric {
  readonly #buckets: readonly number[];
  readonly #series = new Map<string, HistogramSeries>();

  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    super(name, help, 'histogram', labelNames);
    this.#buckets = [...buckets].sort((a, b) => a - b);
  }

  observe(labels: Labels, value: number): void {
    record(this.#buckets, this.#seriesOf(labels), value);
  }

  /** One series bound to its labels, for hot paths (created on its first observation). */
  series(labels: Labels): { observe(value: number): void } {
    let series: HistogramSeries | undefined;
    return {
      observe: (value) => {
        series ??= this.#seriesOf(labels);
        record(this.#buckets, series, value);
      },
    };
  }

  #seriesOf(labels: Labels): HistogramSeries {
    const key = labelKey(this.labelNames, labels);
    let series = this.#series.get(key);
    if (series === undefined) {
      series = { labels: pick(this.labelNames, labels), counts: this.#buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    return series;
  }

  override family(): MetricFamily {
    return {
      ...super.family(),
      buckets: [...this.#buckets],
      series: [...this.#series.values()].map((s) => ({
        labels: { ...s.labels },
        counts: [...s.counts],
        sum: s.sum,
        count: s.count,
      })),
    };
  }

  override render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} histogram\n`;
    for (const s of this.#series.values()) {
      for (const [i, bound] of this.#buckets.entries()) {
        out += `${this.name}_bucket${formatLabels({ ...s.labels, le: String(bound) })} ${s.counts[i] ?? 0}\n`;
      }
      out += `${this.name}_bucket${formatLabels({ ...s.labels, le: '+Inf' })} ${s.count}\n`;
      out += `${this.name}_sum${formatLabels(s.labels)} ${formatValue(s.sum)}\n`;
      out += `${this.name}_count${formatLabels(s.labels)} ${s.count}\n`;
    }
    return out;
  }
}

export const DEFAULT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

export class MetricsRegistry {
  readonly #metrics = new Map<string, Metric>();

  /** With `collect`, the total is read at scrape time (e.g. the CPU time the process used). */
  counter(name: string, help: string, labelNames: readonly string[] = [], collect?: CollectOptions): Counter {
    return this.#register(name, () => new Counter(name, help, 'counter', labelNames, collect), Counter);
  }

  /**
   * With `collect`, the value is computed at scrape time (e.g. a pool count read from a snapshot);
   * a function alone is the collect of a gauge summed over processes.
   */
  gauge(name: string, help: string, labelNames: readonly string[] = [], collect?: Collect | CollectOptions): Gauge {
    const options = typeof collect === 'function' ? { collect } : collect;
    return this.#register(name, () => new Gauge(name, help, labelNames, options), Gauge);
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    buckets: readonly number[] = DEFAULT_BUCKETS,
  ): Histogram {
    return this.#register(name, () => new Histogram(name, help, labelNames, buckets), Histogram);
  }

  /** Every metric as plain data (merge.ts renders several registries' families as one). */
  families(): MetricFamily[] {
    return [...this.#metrics.values()].map((metric) => metric.family());
  }

  /** The whole registry in the Prometheus text format. */
  render(): string {
    return [...this.#metrics.values()].map((metric) => metric.render()).join('');
  }

  #register<T extends Metric>(name: string, make: () => T, kind: abstract new (...args: never[]) => T): T {
    if (!NAME.test(name)) throw new Error(`invalid metric name ${name}`);
    const existing = this.#metrics.get(name);
    if (existing !== undefined) {
      if (!(existing instanceof kind)) throw new Error(`metric ${name} is already registered as a ${existing.type}`);
      return existing;
    }
    const metric = make();
    this.#metrics.set(name, metric);
    return metric;
  }
}

function pick(names: readonly string[], labels: Labels): Labels {
  return Object.fromEntries(names.map((name) => [name, labels[name] ?? '']));
}

function labelKey(names: readonly string[], labels: Labels): string {
  return names.map((name) => labels[name] ?? '').join('\u0000');
}

export function formatLabels(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  const body = entries
    .map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`)
    .join(',');
  return `{${body}}`;
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}
