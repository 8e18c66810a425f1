/**
 * One origin's measurements over a decaying window (SPEC §17 scores): a sample's weight halves every
 * SCORE_HALF_LIFE_MS (10 s), so the window reflects roughly the last half minute of traffic and an origin
 * that recovers (or degrades) shows it within seconds. Kept with forward decay: a sample at time t
 * weighs 2^((t − landmark) / half-life), so adding one is O(1) and nothing is rescanned per sample;
 * quantiles and ratios are ratios of weights, read at any time; the weights are scaled back (and the
 * landmark moved) once they grow past 2^40.
 *
 * Latencies of answered attempts go into the geometric buckets of model/origin-score.ts; failures and
 * throttled attempts are counted beside them. `score(now)` is cached until the next sample, for at most
 * CACHE_MS (100 ms: the decay of `samples` is read again after that).
 * `samples` is the decayed count (all outcomes); below MIN_SAMPLES (a lone sample older than ~20 s)
 * the origin has no score. An origin that only failed in the window scores as if its p90 were
 * NO_ANSWER_P90_MS (1 s), so failing is never better than unknown.
 */
import {
  bucketBounds,
  type OriginScore,
  SCORE_BUCKETS,
  type ScoreOutcome,
  scoreBucket,
} from '../../model/origin-score.js';

export const SCORE_HALF_LIFE_MS = 10_000;
/** Fewer decayed samples than this: no score (unknown). */
export const MIN_SAMPLES = 0.25;
/** The p90 an origin that failed without a single answer in the window is scored with. */
export const NO_ANSWER_P90_MS = 1_000;
const RESCALE_AT = 2 ** 40;
const CACHE_MS = 100;

export class DecayingWindow {
  #landmark: number;
  readonly #latency = new Float64Array(SCORE_BUCKETS);
  #ok = 0;
  #errors = 0;
  #throttles = 0;
  #cached: OriginScore | undefined;
  #cachedAt = 0;

  constructor(now: number) {
    this.#landmark = now;
  }

  /** `count` samples of one outcome at `now` (a latency in ms for `ok`, one bucket for all of them). */
  add(now: number, outcome: ScoreOutcome, ms: number, count = 1): void {
    this.addToBucket(now, outcome, outcome === 'ok' ? scoreBucket(ms) : 0, count);
  }

  /** As `add`, with the latency already put in its bucket (a worker's report). */
  addToBucket(now: number, outcome: ScoreOutcome, bucket: number, count: number): void {
    const weight = this.#weight(now) * count;
    if (outcome === 'ok') {
      this.#ok += weight;
      this.#latency[bucket] = (this.#latency[bucket] as number) + weight;
    } else if (outcome === 'error') {
      this.#errors += weight;
    } else {
      this.#throttles += weight;
    }
    this.#cached = undefined;
  }

  score(now: number): OriginScore {
    if (this.#cached !== undefined && now - this.#cachedAt < CACHE_MS) return this.#cached;
    const total = this.#ok + this.#errors + this.#throttles;
    const weight = 2 ** ((now - this.#landmark) / SCORE_HALF_LIFE_MS);
    const samples = total / weight;
    const p50 = this.#quantile(0.5);
    const p90 = this.#quantile(0.9);
    const errorRatio = total === 0 ? 0 : this.#errors / total;
    const throttleRatio = total === 0 ? 0 : this.#throttles / total;
    const score =
      samples < MIN_SAMPLES ? null : ((p90 ?? NO_ANSWER_P90_MS) / 1000) * (1 + 4 * errorRatio + 4 * throttleRatio);
    this.#cached = {
      samples,
      answered: this.#ok / weight,
      p50_ms: p50,
      p90_ms: p90,
      error_ratio: errorRatio,
      throttle_ratio: throttleRatio,
      score,
    };
    this.#cachedAt = now;
    return this.#cached;
  }

  /** The weight of a sample taken now; rescales everything first when weights grew too large. */
  #weight(now: number): number {
    const weight = 2 ** ((now - this.#landmark) / SCORE_HALF_LIFE_MS);
    if (weight < RESCALE_AT) return weight;
    for (let i = 0; i < SCORE_BUCKETS; i += 1) this.#latency[i] = (this.#latency[i] as number) / weight;
    this.#ok /= weight;
    this.#errors /= weight;
    this.#throttles /= weight;
    this.#landmark = now;
    return 1;
  }

  /** The latency below which a share `q` of the answered attempts' weight lies; null without any. */
  #quantile(q: number): number | null {
    if (this.#ok <= 0) return null;
    const target = this.#ok * q;
    let below = 0;
    for (let i = 0; i < SCORE_BUCKETS; i += 1) {
      const weight = this.#latency[i] as number;
      if (weight > 0 && below + weight >= target) {
        const [lower, upper] = bucketBounds(i);
        return Math.round((lower + ((target - below) / weight) * (upper - lower)) * 100) / 100;
      }
      below += weight;
    }
    return bucketBounds(SCORE_BUCKETS - 1)[1];
  }
}
