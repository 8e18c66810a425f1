/**
 * Per-origin statistics: `GET /accounts/:account_id/load_balancers/origin_stats` (SPEC §13) — for every
 * origin of the account's pools (paginated by pool, in list order): live health and its failure reason,
 * the chain (head, lag behind the best origin of the pool's networks, earliest block served, syncing),
 * and the gateway's traffic summed over workers and instances from the store (`origin_stats`, flushed
 * every 5 s by each process): over the last WINDOW_MINUTES (5) minutes `requests`, `errors`,
 * `requests_per_second`, `error_rate` (errors / requests, 0 without requests) and `p50_ms` (estimated
 * from the latency buckets, stats/latency-buckets.ts; null without requests). With `series=true`, also
 * one hour of per-minute points (`minutes`, 1..60, default 60) for charts, oldest first, zeros filled.
 * `score` (SPEC §17) is the origin's score in this instance (routing/scores/: with workers, the control
 * process's book of every worker's traffic and the probes): its decaying window's p50/p90, error and
 * throttle ratios and the expected latency `value` the router steers by; null until it has one.
 */
import { z } from 'zod';
import type { ChainView } from '../../chain/types.js';
import type { OriginScoreView } from '../../model/origin-score.js';
import type { StatsRow } from '../../model/origin-stats.js';
import { LATENCY_BUCKETS, p50 } from '../../model/origin-stats.js';
import type { Origin, Pool } from '../../model/pool.js';
import { listPools } from '../../pools/pool-queries.js';
import { statsSince } from '../../stats/stats-queries.js';
import type { ApiDeps } from '../deps.js';
import { paginationQuery, parsePagination, resultInfo } from '../pagination.js';
import { accountParam } from '../path-params.js';
import { networksOf } from '../pool-rules.js';
import { defineRoute, type Route } from '../route-table.js';
import { fieldError } from '../validate.js';

const MINUTE_MS = 60_000;
export const WINDOW_MINUTES = 5;
const MAX_SERIES_MINUTES = 60;

const point = z.object({
  minute: z.string().describe('RFC 3339 start of the UTC minute'),
  requests: z.number().int(),
  errors: z.number().int(),
  p50_ms: z.number().nullable(),
});

const originStatsResult = z.object({
  pool_id: z.string(),
  pool_name: z.string(),
  networks: z.array(z.string()),
  origin_name: z.string(),
  enabled: z.boolean(),
  healthy: z.boolean(),
  failure_reason: z.string(),
  head: z.number().int().nullable(),
  lag: z.number().int().nullable(),
  earliest_block: z.number().int().nullable(),
  syncing: z.boolean(),
  requests: z.number().int(),
  errors: z.number().int(),
  requests_per_second: z.number(),
  error_rate: z.number(),
  p50_ms: z.number().nullable(),
  score: z
    .object({
      value: z.number().describe('Expected latency in seconds: p90 × (1 + 4 × error_ratio + 4 × throttle_ratio).'),
      p50_ms: z.number().nullable(),
      p90_ms: z.number().nullable(),
      error_ratio: z.number(),
      throttle_ratio: z.number(),
      samples: z.number().describe('Attempts and probes in the decaying window (each weighs less the older it is).'),
    })
    .nullable()
    .describe('The origin score routing reads (last ~30 s, decaying); null until the origin has one.'),
  series: z.array(point).optional(),
});

type OriginStatsView = z.infer<typeof originStatsResult>;

interface Totals {
  requests: number;
  errors: number;
  buckets: number[];
}

function emptyTotals(): Totals {
  return { requests: 0, errors: 0, buckets: LATENCY_BUCKETS.map(() => 0) };
}

function addTo(totals: Totals, row: StatsRow): void {
  totals.requests += row.requests;
  totals.errors += row.errors;
  for (let i = 0; i < totals.buckets.length; i += 1) {
    totals.buckets[i] = (totals.buckets[i] as number) + (row.buckets[i] ?? 0);
  }
}

function minutesParam(query: URLSearchParams): number {
  const raw = query.get('minutes');
  if (raw === null) return MAX_SERIES_MINUTES;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > MAX_SERIES_MINUTES) {
    throw fieldError('minutes', `"${raw.slice(0, 20)}" is out of range; it must be an integer from 1 to 60`);
  }
  return n;
}

function seriesParam(query: URLSearchParams): boolean {
  const raw = query.get('series');
  if (raw === null || raw === 'false') return false;
  if (raw === 'true') return true;
  throw fieldError('series', `"${raw.slice(0, 20)}" must be true or false`);
}

type StatsDeps = ApiDeps & { chain?: ChainView | undefined };

export function originStatsRoutes(deps: StatsDeps): Route[] {
  return [originStatsRoute(deps)];
}

/** The minutes a request looks at: the 5-minute window, and the series' first minute when asked. */
interface StatsWindow {
  nowMinute: number;
  windowStart: number;
  /** Seconds the window covers so far: whole past minutes plus the current one's elapsed part. */
  windowSeconds: number;
  /** First minute of the series (undefined: no series). */
  seriesStart: number | undefined;
}

function statsWindow(now: number, withSeries: boolean, minutes: number): StatsWindow {
  const nowMinute = Math.floor(now / MINUTE_MS);
  const windowStart = nowMinute - (WINDOW_MINUTES - 1);
  return {
    nowMinute,
    windowStart,
    windowSeconds: (WINDOW_MINUTES - 1) * 60 + (now % MINUTE_MS) / 1000,
    seriesStart: withSeries ? nowMinute - (minutes - 1) : undefined,
  };
}

function originStatsRoute(deps: StatsDeps): Route {
  const { store, clock } = deps;
  return defineRoute({
    method: 'GET',
    path: '/accounts/:account_id/load_balancers/origin_stats',
    auth: 'read',
    summary: 'Per-origin health, chain position and traffic (last 5 minutes; optionally per-minute series)',
    tag: 'health',
    query: paginationQuery.extend({
      series: z.enum(['true', 'false']).optional().describe('Add one hour of per-minute points (default false).'),
      minutes: z.string().optional().describe('Points in the series, 1..60 (default 60).'),
    }),
    result: z.array(originStatsResult),
    paginated: true,
    async handler({ params, query }) {
      const page = parsePagination(query);
      const window = statsWindow(clock.now(), seriesParam(query), minutesParam(query));
      const { pools, total } = await listPools(store.db, deps.secrets, store.dialect, accountParam(params), page);
      const firstMinute = Math.min(window.windowStart, window.seriesStart ?? window.windowStart);
      const rows = await statsSince(
        store.db,
        pools.map((pool) => pool.id),
        firstMinute,
      );
      const byOrigin = new Map<string, StatsRow[]>();
      for (const row of rows) {
        const key = `${row.pool_id}\n${row.origin_name}`;
        const list = byOrigin.get(key);
        if (list === undefined) byOrigin.set(key, [row]);
        else list.push(row);
      }
      const result = pools.flatMap((pool) => poolViews(deps, pool, byOrigin, window));
      return { result, result_info: resultInfo(page, pools.length, total) };
    },
  });
}

/** One view per origin of the pool: its health, chain position and the window's traffic. */
function poolViews(
  deps: StatsDeps,
  pool: Pool,
  byOrigin: ReadonlyMap<string, StatsRow[]>,
  window: StatsWindow,
): OriginStatsView[] {
  const { health } = deps;
  const report = health.report(pool);
  const checked = Object.values(report.pop_health)[0]?.origins ?? [];
  const networks = networksOf(deps.config, pool);
  return pool.origins.map((origin, i) => {
    const own = byOrigin.get(`${pool.id}\n${origin.name}`) ?? [];
    const totals = emptyTotals();
    for (const row of own) if (row.minute >= window.windowStart) addTo(totals, row);
    const view: OriginStatsView = {
      pool_id: pool.id,
      pool_name: pool.name,
      networks,
      origin_name: origin.name,
      enabled: origin.enabled,
      healthy: health.originHealthy(pool, origin),
      failure_reason: Object.values(checked[i] ?? {})[0]?.failure_reason ?? '',
      ...chainOf(deps.chain, pool, origin, networks),
      requests: totals.requests,
      errors: totals.errors,
      requests_per_second: Math.round((totals.requests / window.windowSeconds) * 1000) / 1000,
      error_rate: totals.requests === 0 ? 0 : Math.round((totals.errors / totals.requests) * 10000) / 10000,
      p50_ms: p50(totals.buckets) ?? null,
      score: scoreOf(deps.scores, pool, origin),
    };
    if (window.seriesStart !== undefined) view.series = series(own, window.seriesStart, window.nowMinute);
    return view;
  });
}

/** The origin's score as the API shows it (ratios and latencies rounded), or null. */
function scoreOf(scores: OriginScoreView | undefined, pool: Pool, origin: Origin): OriginStatsView['score'] {
  const score = scores?.score(pool.id, origin.name);
  if (score === undefined || score.score === null) return null;
  const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;
  return {
    value: round(score.score, 6),
    p50_ms: score.p50_ms,
    p90_ms: score.p90_ms,
    error_ratio: round(score.error_ratio, 4),
    throttle_ratio: round(score.throttle_ratio, 4),
    samples: round(score.samples, 2),
  };
}

function chainOf(
  chain: ChainView | undefined,
  pool: Pool,
  origin: Origin,
  networks: readonly string[],
): Pick<OriginStatsView, 'head' | 'lag' | 'earliest_block' | 'syncing'> {
  const state = chain?.origin(pool.id, origin.name);
  const head = state?.head ?? null;
  let best: number | undefined;
  for (const network of networks) {
    const networkHead = chain?.networkHead(network);
    if (networkHead !== undefined && (best === undefined || networkHead > best)) best = networkHead;
  }
  return {
    head,
    lag: head === null || best === undefined ? null : Math.max(0, best - head),
    earliest_block: state === undefined ? null : state.earliest,
    syncing: state?.syncing ?? false,
  };
}

function series(rows: readonly StatsRow[], from: number, to: number): Array<z.infer<typeof point>> {
  const byMinute = new Map<number, Totals>();
  for (const row of rows) {
    if (row.minute < from || row.minute > to) continue;
    let totals = byMinute.get(row.minute);
    if (totals === undefined) {
      totals = emptyTotals();
      byMinute.set(row.minute, totals);
    }
    addTo(totals, row);
  }
  const points: Array<z.infer<typeof point>> = [];
  for (let minute = from; minute <= to; minute += 1) {
    const totals = byMinute.get(minute);
    points.push({
      minute: new Date(minute * MINUTE_MS).toISOString(),
      requests: totals?.requests ?? 0,
      errors: totals?.errors ?? 0,
      p50_ms: totals === undefined ? null : (p50(totals.buckets) ?? null),
    });
  }
  return points;
}
