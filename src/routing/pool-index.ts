/**
 * What the router keeps per pool so that a call's first origin costs O(log n), not a sort of the pool
 * (SPEC §17 "routing cost does not grow with the pool"). Built once per pool object (pools are replaced,
 * never changed in place, when the directory changes; the router keeps them in a WeakMap by pool):
 *   - `origins`: the enabled origins with weight > 0 — the only ones routing may choose;
 *   - `cumulative`: their running weight sums, so a weighted draw is a binary search (`draw`);
 *   - for `dynamic_latency`, `byScore(now)`: the origins by score, best first, origins without a score
 *     (no sample in the window: unknown) ahead of every scored one in a weighted random order so they
 *     get measured; re-sorted at most every SCORE_ORDER_MS (100 ms), since scores move with every answer.
 * Health, demotion, throttling and what a call needs change per call and are checked on the candidate
 * drawn, never folded in here.
 */
import type { OriginScoreView } from '../model/origin-score.js';
import type { Origin, Pool } from '../model/pool.js';
import { weightedShuffle } from './steering.js';

export const SCORE_ORDER_MS = 100;

export class PoolIndex {
  readonly origins: readonly Origin[];
  readonly #cumulative: Float64Array;
  readonly total: number;
  #byScore: Origin[] | undefined;
  #scoredAt = 0;

  constructor(pool: Pool) {
    this.origins = pool.origins.filter((origin) => origin.enabled && origin.weight > 0);
    this.#cumulative = new Float64Array(this.origins.length);
    let sum = 0;
    for (let i = 0; i < this.origins.length; i += 1) {
      sum += (this.origins[i] as Origin).weight;
      this.#cumulative[i] = sum;
    }
    this.total = sum;
  }

  /** An origin drawn with probability proportional to its weight (one binary search). */
  draw(random: () => number): Origin {
    const target = random() * this.total;
    const sums = this.#cumulative;
    let low = 0;
    let high = sums.length - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((sums[mid] as number) > target) high = mid;
      else low = mid + 1;
    }
    return this.origins[low] as Origin;
  }

  /** The origins best score first (unknown ones ahead), as of at most SCORE_ORDER_MS ago. */
  byScore(poolId: string, scores: OriginScoreView | undefined, now: number, random: () => number): readonly Origin[] {
    if (this.#byScore !== undefined && now - this.#scoredAt < SCORE_ORDER_MS) return this.#byScore;
    const unknown: Origin[] = [];
    const scored: Array<{ origin: Origin; score: number }> = [];
    for (const origin of this.origins) {
      const score = scores?.score(poolId, origin.name)?.score;
      if (score === undefined || score === null) unknown.push(origin);
      else scored.push({ origin, score });
    }
    scored.sort((a, b) => a.score - b.score || (a.origin.name < b.origin.name ? -1 : 1));
    this.#byScore = [...weightedShuffle(unknown, random), ...scored.map((entry) => entry.origin)];
    this.#scoredAt = now;
    return this.#byScore;
  }

  /** The best score among the pool's origins (lower is better); undefined when none has one. */
  bestScore(poolId: string, scores: OriginScoreView | undefined): number | undefined {
    let best: number | undefined;
    for (const origin of this.origins) {
      const score = scores?.score(poolId, origin.name)?.score;
      if (score !== undefined && score !== null && (best === undefined || score < best)) best = score;
    }
    return best;
  }
}
