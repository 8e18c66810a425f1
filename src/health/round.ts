/**
 * One round of one pool: take (or renew) the pool's checker lease, check every enabled origin at once
 * (when the pool has a monitor), then in ONE transaction write the new origin states, the pool state and
 * the events for every change. Writes are compare-and-set on `generation`; if another process wrote in
 * between, the transaction rolls back, this round's results are dropped and the stored state is re-read —
 * so each change is recorded exactly once even with several processes on one PostgreSQL.
 *
 * Without a monitor a pool's enabled origins count as Healthy, so its state follows `minimum_origins` and
 * the enabled origins alone. State rows of origins no longer checked (disabled, removed, address changed,
 * monitor removed) are deleted in the same transaction: such an origin starts from Unknown again.
 * A check the origin throttled (HTTP 429, a rate-limit answer: probes/result.ts `throttled`) counts
 * neither up nor down: the origin keeps its state and counters (SPEC §17).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { MonitorSettings } from '../model/monitor-schema.js';
import { maskAddress } from '../model/origin-address.js';
import type { Origin, Pool } from '../model/pool.js';
import type { Db, Store } from '../store/database.js';
import { timestamp } from '../store/ids.js';
import { type HealthEventInput, insertHealthEvent } from './events.js';
import type { LiveState } from './live-state.js';
import { checkOrigin } from './probes/check.js';
import { applyBlockLag } from './probes/jsonrpc.js';
import type { ProbeResult } from './probes/result.js';
import type { ProbeTransport } from './probes/transport.js';
import { change, nextOriginCounters, poolReason, poolStatus, type StateName } from './state-machine.js';
import {
  acquirePoolLease,
  casOriginHealth,
  casPoolHealth,
  deleteOriginHealth,
  loadOriginHealth,
  loadPoolHealth,
  type OriginHealthRow,
  type PoolHealthRow,
  stateAddress,
} from './state-queries.js';

export interface RoundContext {
  store: Store;
  transport: ProbeTransport;
  clock: Clock;
  /** This process's lease-owner id. */
  owner: string;
  live: LiveState;
  logger: Logger;
  /** Called for every committed check result and event (metrics). */
  onCheck?: (pool: Pool, origin: Origin, result: ProbeResult, type: string) => void;
  onEvent?: (event: HealthEventInput) => void;
  /** Called once per committed round that recorded events (the notification service's nudge). */
  onEvents?: (events: readonly HealthEventInput[]) => void;
  /** Called with each block number a probe of the committed round saw (the chain tracker's feed). */
  onBlockNumber?: (poolId: string, originName: string, blockNumber: number) => void;
  /**
   * The network head the chain tracker adopted (SPEC §20): a pool's `max_block_lag` is judged against at
   * most the highest of its networks' (none known: the pool's best alone).
   */
  adoptedHead?: (network: string) => number | undefined;
  /** Called with each committed check's result (the origin scores' feed, SPEC §17). */
  onProbe?: (poolId: string, originName: string, result: ProbeResult) => void;
}

export interface PoolPlan {
  pool: Pool;
  monitor: MonitorSettings | undefined;
  /** Chain ids a jsonrpc origin must report (empty: the pool is in no network, chain id not checked). */
  expectedChainIds: readonly number[];
  /** How long the lease lasts without renewal; another process takes over after that. */
  leaseMs: number;
  /** The networks that list the pool (their adopted heads bound the lag rule); none when absent. */
  networks?: readonly string[];
}

export type RoundOutcome =
  | { kind: 'checked'; events: HealthEventInput[] }
  | { kind: 'standby' } // another process holds the lease
  | { kind: 'conflict' }; // another process wrote first; nothing recorded

const PROBE_CONCURRENCY = 32;

class WriteConflict extends Error {}

export async function runPoolRound(ctx: RoundContext, plan: PoolPlan): Promise<RoundOutcome> {
  const { pool } = plan;
  const started = ctx.clock.now();
  if (!(await takeLease(ctx, plan, started))) {
    await refreshPool(ctx, pool.id);
    return { kind: 'standby' };
  }
  ctx.live.claim(pool.id);
  const enabled = pool.enabled ? pool.origins.filter((origin) => origin.enabled) : [];
  const results = await probeOrigins(ctx, plan, enabled);
  try {
    const round: Round = { ctx, plan, enabled, results, checkedAt: new Date(started).toISOString() };
    const written = await ctx.store.db.transaction().execute((trx) => writeRound(trx, round));
    ctx.live.writePool(pool.id, written.poolRow, written.originRows);
    announce(round, written.events);
    return { kind: 'checked', events: written.events };
  } catch (err) {
    if (!(err instanceof WriteConflict) && !isWriteBusy(err)) throw err;
    await refreshPool(ctx, pool.id);
    return { kind: 'conflict' };
  }
}

/** One round's inputs: the pool's plan, its enabled origins and what their checks found. */
interface Round {
  ctx: RoundContext;
  plan: PoolPlan;
  enabled: readonly Origin[];
  results: ReadonlyMap<string, ProbeResult>;
  checkedAt: string;
}

/** Takes or renews the pool's checker lease; false when another process holds it. */
function takeLease(ctx: RoundContext, plan: PoolPlan, started: number): Promise<boolean> {
  return acquirePoolLease(ctx.store.db, {
    pool_id: plan.pool.id,
    account_id: plan.pool.account_id,
    owner: ctx.owner,
    now: new Date(started).toISOString(),
    until: new Date(started + plan.leaseMs).toISOString(),
  });
}

/** Checks the enabled origins (PROBE_CONCURRENCY at once) when the pool has a monitor. */
async function probeOrigins(
  ctx: RoundContext,
  plan: PoolPlan,
  enabled: readonly Origin[],
): Promise<Map<string, ProbeResult>> {
  const results = new Map<string, ProbeResult>();
  const { monitor } = plan;
  if (monitor === undefined) return results;
  // The pool's account decides which targets its probes may reach (outbound policy).
  const transport = ctx.transport.forAccount(plan.pool.account_id);
  await eachLimited(enabled, PROBE_CONCURRENCY, async (origin) => {
    results.set(origin.name, await checkOrigin(transport, origin, monitor, plan.expectedChainIds));
  });
  if (monitor.type === 'jsonrpc') applyBlockLag(results, monitor.max_block_lag, [], adoptedHead(ctx, plan));
  return results;
}

interface WrittenRound {
  events: HealthEventInput[];
  originRows: OriginHealthRow[];
  poolRow: PoolHealthRow | undefined;
}

/** The round's transaction: stale rows out, then origin states, then the pool state, then the events. */
async function writeRound(trx: Db, round: Round): Promise<WrittenRound> {
  const { pool } = round.plan;
  const stored = new Map((await loadOriginHealth(trx, [pool.id])).map((row) => [row.origin_name, row]));
  const poolRow = (await loadPoolHealth(trx, [pool.id]))[0];
  const now = timestamp(round.ctx.clock);
  await dropStaleOrigins(trx, round, stored);
  const events: HealthEventInput[] = [];
  const originRows = await writeOriginStates(trx, round, stored, now, events);
  const newPoolRow = await writePoolState(trx, round, originRows, poolRow, now, events);
  for (const event of events) await insertHealthEvent(trx, event);
  return { events, originRows, poolRow: newPoolRow };
}

/** Deletes the rows of origins no longer checked here (and forgets them in `stored`). */
async function dropStaleOrigins(trx: Db, round: Round, stored: Map<string, OriginHealthRow>): Promise<void> {
  const { enabled } = round;
  const keep = new Set(round.plan.monitor === undefined ? [] : enabled.map((origin) => origin.name));
  const stale = [...stored.values()].filter(
    (row) =>
      !keep.has(row.origin_name) ||
      stateAddress(enabled.find((o) => o.name === row.origin_name) as Origin) !== row.origin_address,
  );
  await deleteOriginHealth(
    trx,
    round.plan.pool.id,
    stale.map((row) => row.origin_name),
  );
  for (const row of stale) stored.delete(row.origin_name);
}

/** Each checked origin's next state (compare-and-set), and an event for each change that raises one. */
async function writeOriginStates(
  trx: Db,
  round: Round,
  stored: ReadonlyMap<string, OriginHealthRow>,
  now: string,
  events: HealthEventInput[],
): Promise<OriginHealthRow[]> {
  const { pool, monitor } = round.plan;
  if (monitor === undefined) return [];
  const rows: OriginHealthRow[] = [];
  for (const origin of round.enabled) {
    const result = round.results.get(origin.name) as ProbeResult;
    const previous = stored.get(origin.name);
    const counters = previous ?? { status: 'Unknown' as const, failures: 0, successes: 0 };
    // A throttled check (HTTP 429, a rate-limit answer) counts neither up nor down (SPEC §17).
    const step =
      result.throttled === true
        ? { state: { status: counters.status, failures: counters.failures, successes: counters.successes } }
        : nextOriginCounters(counters, result.ok, monitor);
    const row: OriginHealthRow = {
      pool_id: pool.id,
      origin_name: origin.name,
      origin_address: stateAddress(origin),
      status: step.state.status,
      failures: step.state.failures,
      successes: step.state.successes,
      last_ok: result.ok ? 1 : 0,
      failure_reason: result.failure_reason,
      response_code: result.response_code,
      rtt_ms: result.rtt_ms,
      checked_at: round.checkedAt,
      changed_at: step.change === undefined ? (previous?.changed_at ?? null) : now,
      generation: (previous?.generation ?? 0) + 1,
    };
    if (!(await casOriginHealth(trx, row, previous?.generation ?? null))) throw new WriteConflict();
    rows.push(row);
    if (!step.change?.event) continue;
    events.push({
      ...eventBase(pool),
      id: randomUUID(),
      event_source: 'origin',
      origin_name: origin.name,
      origin_address: maskAddress(origin.address),
      previous: step.change.previous,
      new_health: step.change.next,
      reason: step.change.next === 'Unhealthy' ? result.failure_reason : originRecoveryReason(step.state.successes),
      occurred_at: now,
    });
  }
  return rows;
}

/** The pool's state from its origins' (compare-and-set when it changes), and its event. */
async function writePoolState(
  trx: Db,
  round: Round,
  originRows: readonly OriginHealthRow[],
  poolRow: PoolHealthRow | undefined,
  now: string,
  events: HealthEventInput[],
): Promise<PoolHealthRow | undefined> {
  const { pool, monitor } = round.plan;
  const statuses: StateName[] =
    monitor === undefined ? round.enabled.map(() => 'Healthy') : originRows.map((r) => r.status);
  const next = poolStatus(statuses, pool.minimum_origins);
  const current = poolRow?.status ?? 'Unknown';
  if (next === 'Unknown' || next === current) return poolRow;
  const newPoolRow: PoolHealthRow = {
    pool_id: pool.id,
    account_id: pool.account_id,
    status: next,
    changed_at: now,
    generation: (poolRow?.generation ?? 0) + 1,
    lease_owner: poolRow?.lease_owner ?? null,
    lease_until: poolRow?.lease_until ?? null,
  };
  if (!(await casPoolHealth(trx, newPoolRow, poolRow?.generation ?? null))) throw new WriteConflict();
  const poolChange = change(current, next);
  if (poolChange.event) {
    const healthy = statuses.filter((status) => status === 'Healthy').length;
    events.push({
      ...eventBase(pool),
      id: randomUUID(),
      event_source: 'pool',
      origin_name: null,
      origin_address: null,
      previous: poolChange.previous,
      new_health: next,
      reason: poolReason(healthy, round.enabled.length, pool.minimum_origins, next),
      occurred_at: now,
    });
  }
  return newPoolRow;
}

function eventBase(pool: Pool): Pick<HealthEventInput, 'account_id' | 'pool_id' | 'pool_name'> {
  return { account_id: pool.account_id, pool_id: pool.id, pool_name: pool.name };
}

/** After the commit: each check result and block number to its listener, each event logged and told. */
function announce(round: Round, events: readonly HealthEventInput[]): void {
  const { ctx, plan, results } = round;
  const { pool, monitor } = plan;
  for (const origin of round.enabled) {
    const result = results.get(origin.name);
    if (result !== undefined && monitor !== undefined) {
      ctx.onCheck?.(pool, origin, result, monitor.type);
      ctx.onProbe?.(pool.id, origin.name, result);
    }
    if (result?.block_number !== undefined) ctx.onBlockNumber?.(pool.id, origin.name, Number(result.block_number));
  }
  for (const event of events) {
    ctx.onEvent?.(event);
    // Losing health is what an operator must see; recovering is good news.
    ctx.logger[event.new_health === 'Unhealthy' ? 'warn' : 'info']('health change', {
      event_source: event.event_source,
      pool: pool.name,
      origin: event.origin_name ?? undefined,
      previous: event.previous,
      new_health: event.new_health,
      reason: event.reason,
    });
  }
  if (events.length > 0) ctx.onEvents?.(events);
}

/** The highest head the tracker adopted for the pool's networks, if any. */
function adoptedHead(ctx: RoundContext, plan: PoolPlan): bigint | undefined {
  let best: number | undefined;
  for (const network of plan.networks ?? []) {
    const head = ctx.adoptedHead?.(network);
    if (head !== undefined && (best === undefined || head > best)) best = head;
  }
  return best === undefined ? undefined : BigInt(best);
}

/** Re-reads one pool's stored state into the live copy. */
export async function refreshPool(ctx: Pick<RoundContext, 'store' | 'live'>, poolId: string): Promise<void> {
  const mark = ctx.live.mark();
  const [origins, pools] = await Promise.all([
    loadOriginHealth(ctx.store.db, [poolId]),
    loadPoolHealth(ctx.store.db, [poolId]),
  ]);
  ctx.live.replace(origins, pools, mark, [poolId]);
}

/**
 * SQLite refuses to upgrade a read snapshot that another connection has since written past
 * (SQLITE_BUSY_SNAPSHOT) — the same situation as a failed compare-and-set, handled the same way.
 */
function isWriteBusy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

function originRecoveryReason(successes: number): string {
  return successes === 1 ? 'check passed' : `${successes} consecutive checks passed`;
}

async function eachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
