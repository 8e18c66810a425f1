/**
 * Per-origin counters of the gateway's attempts (SPEC §13): requests, errors and a latency histogram per
 * (pool id, origin name, UTC minute), kept in memory. The hot path (`record`, called once per attempt
 * by gateway/upstream/attempt.ts) does two Map lookups, a clock read, a bucket scan over at most 14
 * bounds and three integer increments: no allocation except when an origin's minute rolls over, never a
 * store write. `drain()` hands over everything counted since the last drain as rows (the store flush,
 * stats/recorder.ts, or a worker's report to its control process, cluster/shared-state.ts); `add()`
 * merges rows drained elsewhere (a worker's, or a failed flush's), so counts from every worker reach one
 * flush and every instance's flush adds up in the store.
 */
import type { Clock } from '../clock.js';
import {
  bucketOf,
  LATENCY_BUCKETS,
  mergeRows,
  type OriginStatsCollector,
  type StatsRow,
} from '../model/origin-stats.js';

interface Cell {
  minute: number;
  requests: number;
  errors: number;
  buckets: Uint32Array;
}

const MINUTE_MS = 60_000;

export class OriginStats implements OriginStatsCollector {
  readonly #clock: Clock;
  /** pool id → origin name → the current minute's cell */
  #current = new Map<string, Map<string, Cell>>();
  /** Cells of past minutes (rolled over, or added from elsewhere) not drained yet. */
  #closed: StatsRow[] = [];

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  record(poolId: string, originName: string, ms: number, ok: boolean): void {
    const minute = Math.floor(this.#clock.now() / MINUTE_MS);
    let origins = this.#current.get(poolId);
    if (origins === undefined) {
      origins = new Map();
      this.#current.set(poolId, origins);
    }
    let cell = origins.get(originName);
    if (cell === undefined || cell.minute !== minute) {
      if (cell !== undefined && cell.requests > 0) this.#closed.push(rowOf(poolId, originName, cell));
      cell = { minute, requests: 0, errors: 0, buckets: new Uint32Array(LATENCY_BUCKETS.length) };
      origins.set(originName, cell);
    }
    cell.requests += 1;
    if (!ok) cell.errors += 1;
    (cell.buckets[bucketOf(ms)] as number) += 1;
  }

  /** Adds rows counted elsewhere; they leave with the next drain. */
  add(rows: readonly StatsRow[]): void {
    for (const row of rows) this.#closed.push(row);
  }

  /** Everything counted since the last drain, one row per (pool, origin, minute); resets the counts. */
  drain(): StatsRow[] {
    const rows = this.#closed;
    this.#closed = [];
    for (const [poolId, origins] of this.#current) {
      for (const [originName, cell] of origins) {
        if (cell.requests === 0) continue;
        rows.push(rowOf(poolId, originName, cell));
        cell.requests = 0;
        cell.errors = 0;
        cell.buckets.fill(0);
      }
    }
    return mergeRows(rows);
  }
}

function rowOf(poolId: string, originName: string, cell: Cell): StatsRow {
  return {
    pool_id: poolId,
    origin_name: originName,
    minute: cell.minute,
    requests: cell.requests,
    errors: cell.errors,
    buckets: Array.from(cell.buckets),
  };
}
