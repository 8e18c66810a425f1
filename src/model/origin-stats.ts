/**
 * Per-origin statistics, the shared part (SPEC §13): the latency histogram's fixed buckets, the row
 * counted per (pool id, origin name, UTC minute), and the ports between the gateway's in-memory counters
 * (gateway/origin-stats.ts), the workers' reports (cluster/shared-state.ts) and the store flush
 * (stats/recorder.ts).
 *
 * Buckets: upper bounds in milliseconds, the last one open; fixed so that counts from every process add
 * up bucket by bucket, in memory and in the store (`b0`..`b13`). p50 is estimated by linear
 * interpolation inside the bucket holding the median, so it is exact to within that bucket's width
 * (e.g. 20–50 ms); a median in the open bucket reports its lower bound (10 s).
 */
export const LATENCY_BUCKETS: readonly number[] = [
  1,
  2,
  5,
  10,
  20,
  50,
  100,
  200,
  500,
  1_000,
  2_000,
  5_000,
  10_000,
  Number.POSITIVE_INFINITY,
];

export function bucketOf(ms: number): number {
  let i = 0;
  while (ms > (LATENCY_BUCKETS[i] as number)) i += 1;
  return i;
}

/** The estimated median in ms of these bucket counts; undefined when they are all zero. */
export function p50(buckets: readonly number[]): number | undefined {
  let total = 0;
  for (const n of buckets) total += n;
  if (total === 0) return undefined;
  const half = total / 2;
  let below = 0;
  for (let i = 0; i < buckets.length; i += 1) {
    const n = buckets[i] as number;
    if (below + n >= half && n > 0) {
      const lower = i === 0 ? 0 : (LATENCY_BUCKETS[i - 1] as number);
      const upper = LATENCY_BUCKETS[i] as number;
      if (!Number.isFinite(upper)) return lower;
      return Math.round((lower + ((half - below) / n) * (upper - lower)) * 10) / 10;
    }
    below += n;
  }
  return undefined;
}

/** Where the gateway reports each attempt on an origin. */
export interface OriginStatsSink {
  /** `ms`: the attempt's duration; `ok`: the origin answered usefully (not a failure of any kind). */
  record(poolId: string, originName: string, ms: number, ok: boolean): void;
}

/** One drained row: the wire format of worker reports, too. `buckets` has LATENCY_BUCKETS.length counts. */
export interface StatsRow {
  pool_id: string;
  origin_name: string;
  minute: number;
  requests: number;
  errors: number;
  buckets: number[];
}

/** Counters that can also take rows counted elsewhere and hand everything over (gateway/origin-stats.ts). */
export interface OriginStatsCollector extends OriginStatsSink {
  add(rows: readonly StatsRow[]): void;
  drain(): StatsRow[];
}

/** One row per (pool, origin, minute): PostgreSQL refuses to upsert one row twice in a statement. */
export function mergeRows(rows: readonly StatsRow[]): StatsRow[] {
  const byKey = new Map<string, StatsRow>();
  for (const row of rows) {
    const key = `${row.pool_id}\n${row.origin_name}\n${row.minute}`;
    const seen = byKey.get(key);
    if (seen === undefined) {
      byKey.set(key, { ...row, buckets: [...row.buckets] });
      continue;
    }
    seen.requests += row.requests;
    seen.errors += row.errors;
    for (let i = 0; i < seen.buckets.length; i += 1) {
      seen.buckets[i] = (seen.buckets[i] as number) + (row.buckets[i] ?? 0);
    }
  }
  return [...byKey.values()];
}

/** Reads a worker's report (untrusted shape): well-formed rows only. */
export function statsRowsOf(payload: unknown): StatsRow[] {
  if (!Array.isArray(payload)) return [];
  const rows: StatsRow[] = [];
  for (const item of payload as unknown[]) {
    const row = item as Partial<StatsRow> | null;
    if (
      row === null ||
      typeof row !== 'object' ||
      typeof row.pool_id !== 'string' ||
      typeof row.origin_name !== 'string' ||
      !Number.isSafeInteger(row.minute) ||
      !Number.isSafeInteger(row.requests) ||
      !Number.isSafeInteger(row.errors) ||
      !Array.isArray(row.buckets) ||
      row.buckets.length !== LATENCY_BUCKETS.length ||
      !row.buckets.every((n) => Number.isSafeInteger(n) && n >= 0)
    ) {
      continue;
    }
    rows.push(row as StatsRow);
  }
  return rows;
}
