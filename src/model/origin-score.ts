/**
 * Origin scores, the shared part (SPEC §17): what one origin is measured to do — latency quantiles,
 * error and throttle ratios over a decaying window — as the router, the hedging rule, the metrics and
 * the origin stats API read it (`OriginScoreView`), where attempts and probes report to
 * (`OriginScoreSink`), and the rows a gateway worker sends its control process (`ScoreReportRow`).
 * The window itself is routing/scores/.
 *
 * Latency buckets: geometric, bucket i holding (BASE·RATIO^(i−1), BASE·RATIO^i] ms with BASE 0.25 ms and
 * RATIO 1.2 (bucket 0 holds [0, 0.25]); the last is open (past ~87 s). A quantile is interpolated inside
 * its bucket, so it is exact to within 20 %. Fixed, so counts from every process add up bucket by bucket.
 */

export const SCORE_BUCKETS = 72;
const BASE_MS = 0.25;
const RATIO = 1.2;
const LOG_RATIO = Math.log(RATIO);

/** The bucket of a latency in ms. */
export function scoreBucket(ms: number): number {
  if (!(ms > BASE_MS)) return 0;
  return Math.min(SCORE_BUCKETS - 1, Math.ceil(Math.log(ms / BASE_MS) / LOG_RATIO - 1e-9));
}

/** The bounds of bucket i in ms: [lower, upper]. */
export function bucketBounds(i: number): [number, number] {
  return [i === 0 ? 0 : BASE_MS * RATIO ** (i - 1), BASE_MS * RATIO ** i];
}

/** How an attempt (or probe) went, as a score counts it. */
export type ScoreOutcome = 'ok' | 'error' | 'throttled';

/** One origin's score now. */
export interface OriginScore {
  /** Samples in the window (decayed: a sample counts less the older it is). */
  readonly samples: number;
  /** Of those, answered attempts: the latency samples the quantiles come from (decayed as well). */
  readonly answered: number;
  /** Latency quantiles of answered attempts in ms; null without any. */
  readonly p50_ms: number | null;
  readonly p90_ms: number | null;
  /** Failed attempts (connect, timeout, broken connection, bad status or body) ÷ all of them. */
  readonly error_ratio: number;
  /** Throttled attempts (HTTP 429, a rate-limit answer) ÷ all of them. */
  readonly throttle_ratio: number;
  /**
   * The expected latency in seconds, lower is better: p90 × (1 + 4 × error_ratio + 4 × throttle_ratio);
   * null until the origin has answered once in the window.
   */
  readonly score: number | null;
}

/** Scores by pool id and origin name (routing/scores/score-book.ts). */
export interface OriginScoreView {
  score(poolId: string, originName: string): OriginScore | undefined;
}

/** Where attempts and probes report. `ms`: the latency of an `ok` (ignored otherwise). */
export interface OriginScoreSink {
  record(poolId: string, originName: string, outcome: ScoreOutcome, ms: number): void;
}

/** What one process counted for one origin since its last report (a worker's report to its control). */
export interface ScoreReportRow {
  pool_id: string;
  origin_name: string;
  errors: number;
  throttles: number;
  /** [bucket, count] pairs of the `ok` latencies. */
  latency: Array<[number, number]>;
}

/** A monitor probe's outcome, as the control process relays it to its workers: [pool id, origin, outcome, ms]. */
export type ProbeSample = [string, string, ScoreOutcome, number];

/** Reads a relayed batch of probe samples (untrusted shape): well-formed ones only. */
export function probeSamplesOf(payload: unknown): ProbeSample[] {
  if (!Array.isArray(payload)) return [];
  return (payload as unknown[]).filter(
    (item): item is ProbeSample =>
      Array.isArray(item) &&
      item.length === 4 &&
      typeof item[0] === 'string' &&
      typeof item[1] === 'string' &&
      (item[2] === 'ok' || item[2] === 'error' || item[2] === 'throttled') &&
      typeof item[3] === 'number' &&
      Number.isFinite(item[3]) &&
      item[3] >= 0,
  );
}

/** Reads a worker's report (untrusted shape): well-formed rows only. */
export function scoreRowsOf(payload: unknown): ScoreReportRow[] {
  if (!Array.isArray(payload)) return [];
  const rows: ScoreReportRow[] = [];
  for (const item of payload as unknown[]) {
    const row = item as Partial<ScoreReportRow> | null;
    if (
      row === null ||
      typeof row !== 'object' ||
      typeof row.pool_id !== 'string' ||
      typeof row.origin_name !== 'string' ||
      !count(row.errors) ||
      !count(row.throttles) ||
      !Array.isArray(row.latency) ||
      !row.latency.every(
        (pair) =>
          Array.isArray(pair) &&
          pair.length === 2 &&
          Number.isInteger(pair[0]) &&
          pair[0] >= 0 &&
          pair[0] < SCORE_BUCKETS &&
          count(pair[1]),
      )
    ) {
      continue;
    }
    rows.push(row as ScoreReportRow);
  }
  return rows;
}

function count(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
