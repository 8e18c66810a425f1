/**
 * The scores of every origin this process routes to or watches (SPEC §17), one DecayingWindow per
 * (pool id, origin name), read by steering (`dynamic_latency`), by hedging (an origin's p90), by the
 * `switchyard_origin_score` metric and the origin stats API. Live attempts and monitor probes report
 * here; a pool serving two networks shares its origins' scores between them (it is the same node).
 *
 * With gateway workers (SPEC §11) each worker keeps a book of its own traffic, which its steering and
 * hedging read (no IPC on the hot path), and reports what it counted every second (`drain`, with
 * `reporting: true`); the control process adds every worker's report and its probes to its book
 * (`add`), which the metric and the API read: one window over the whole gateway's traffic. The probes
 * the control sees (`probe`) are kept for relaying (`drainProbes`, with `relaying: true`) and `adopt`ed
 * by each worker (never reported back). Several instances each keep their own (docs/routing.md).
 * `prune` forgets origins no longer in any pool. Reads the injected Clock's monotonic time.
 */
import type { Clock } from '../../clock.js';
import type {
  OriginScore,
  OriginScoreSink,
  OriginScoreView,
  ProbeSample,
  ScoreOutcome,
  ScoreReportRow,
} from '../../model/origin-score.js';
import { scoreBucket } from '../../model/origin-score.js';
import { DecayingWindow } from './decaying-window.js';

/** What is counted for one origin until the next report. */
interface PendingCounts {
  errors: number;
  throttles: number;
  latency: Map<number, number>;
}

export class ScoreBook implements OriginScoreView, OriginScoreSink {
  readonly #clock: Clock;
  /** pool id → origin name → window */
  readonly #windows = new Map<string, Map<string, DecayingWindow>>();
  /** `${poolId}\n${origin}` → counts since the last drain; only when reporting. */
  readonly #pending: Map<string, PendingCounts> | undefined;
  /** Probe samples not relayed yet; only when relaying. */
  #probes: ProbeSample[] | undefined;

  constructor(clock: Clock, options: { reporting?: boolean; relaying?: boolean } = {}) {
    this.#clock = clock;
    this.#pending = options.reporting === true ? new Map() : undefined;
    this.#probes = options.relaying === true ? [] : undefined;
  }

  /** A monitor probe's outcome (`ms`: its round trip); kept for the workers too when relaying. */
  probe(poolId: string, originName: string, outcome: ScoreOutcome, ms: number): void {
    this.record(poolId, originName, outcome, ms);
    this.#probes?.push([poolId, originName, outcome, ms]);
  }

  /** The probe samples since the last call (relaying books only). */
  drainProbes(): ProbeSample[] {
    const probes = this.#probes;
    if (probes === undefined || probes.length === 0) return [];
    this.#probes = [];
    return probes;
  }

  record(poolId: string, originName: string, outcome: ScoreOutcome, ms: number): void {
    this.adopt(poolId, originName, outcome, ms);
    if (this.#pending !== undefined) this.#count(poolId, originName, outcome, ms);
  }

  /** A sample counted elsewhere (a probe the control process relayed): into the window, never reported. */
  adopt(poolId: string, originName: string, outcome: ScoreOutcome, ms: number): void {
    this.#window(poolId, originName).add(this.#clock.monotonic(), outcome, ms);
  }

  score(poolId: string, originName: string): OriginScore | undefined {
    return this.#windows.get(poolId)?.get(originName)?.score(this.#clock.monotonic());
  }

  /** Everything recorded since the last drain, one row per origin (reporting books only). */
  drain(): ScoreReportRow[] {
    const pending = this.#pending;
    if (pending === undefined || pending.size === 0) return [];
    const rows: ScoreReportRow[] = [];
    for (const [key, counts] of pending) {
      const cut = key.indexOf('\n');
      rows.push({
        pool_id: key.slice(0, cut),
        origin_name: key.slice(cut + 1),
        errors: counts.errors,
        throttles: counts.throttles,
        latency: [...counts.latency],
      });
    }
    pending.clear();
    return rows;
  }

  /** Adds a report counted elsewhere (a worker's), as samples taken now. */
  add(rows: readonly ScoreReportRow[]): void {
    const now = this.#clock.monotonic();
    for (const row of rows) {
      const window = this.#window(row.pool_id, row.origin_name);
      for (const [bucket, count] of row.latency) window.addToBucket(now, 'ok', bucket, count);
      if (row.errors > 0) window.addToBucket(now, 'error', 0, row.errors);
      if (row.throttles > 0) window.addToBucket(now, 'throttled', 0, row.throttles);
    }
  }

  /** Forgets the origins that are not in `pools` any more. */
  prune(pools: Iterable<{ readonly id: string; readonly origins: ReadonlyArray<{ readonly name: string }> }>): void {
    const keep = new Map<string, Set<string>>();
    for (const pool of pools) keep.set(pool.id, new Set(pool.origins.map((origin) => origin.name)));
    for (const [poolId, origins] of this.#windows) {
      const names = keep.get(poolId);
      if (names === undefined) {
        this.#windows.delete(poolId);
        continue;
      }
      for (const name of origins.keys()) if (!names.has(name)) origins.delete(name);
    }
  }

  #window(poolId: string, originName: string): DecayingWindow {
    let origins = this.#windows.get(poolId);
    if (origins === undefined) {
      origins = new Map();
      this.#windows.set(poolId, origins);
    }
    let window = origins.get(originName);
    if (window === undefined) {
      window = new DecayingWindow(this.#clock.monotonic());
      origins.set(originName, window);
    }
    return window;
  }

  #count(poolId: string, originName: string, outcome: ScoreOutcome, ms: number): void {
    const pending = this.#pending as Map<string, PendingCounts>;
    const key = `${poolId}\n${originName}`;
    let counts = pending.get(key);
    if (counts === undefined) {
      counts = { errors: 0, throttles: 0, latency: new Map() };
      pending.set(key, counts);
    }
    if (outcome === 'ok') {
      const bucket = scoreBucket(ms);
      counts.latency.set(bucket, (counts.latency.get(bucket) ?? 0) + 1);
    } else if (outcome === 'error') {
      counts.errors += 1;
    } else {
      counts.throttles += 1;
    }
  }
}
