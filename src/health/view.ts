import type { Clock } from '../clock.js';
import type { HealthView, LiveFailureKind } from '../model/health-view.js';
import type { Origin, Pool, PoolDirectory } from '../model/pool.js';
import type { LiveState } from './live-state.js';
import { stateAddress } from './state-queries.js';

/**
 * The monitor-backed HealthView the gateway routes by. Synchronous: every answer comes from memory.
 * - Disabled pools and origins are never healthy (never routed to).
 * - Pools with a monitor: an origin is healthy unless its state is Unhealthy (Unknown — not yet
 *   established right after start — counts as healthy so the gateway serves from the first second).
 * - Pools without a monitor: enabled origins are healthy.
 * - Live traffic (`reportFailure`) takes an origin out of rotation in this process without waiting for
 *   the next scheduled check:
 *   - a refused connection (`connect`, or no kind given) ejects it at once: nothing listens there;
 *   - a timeout or a connection that broke mid-exchange (`timeout`, `network`) is a strike; STRIKES (3)
 *     in a row — no successful call in between (`reportSuccess`), none more than STRIKE_WINDOW_MS (30 s)
 *     after the first — eject it. One slow call among successes (a large eth_getLogs) never does.
 * - An ejected origin of a monitored pool returns only when the monitor says so: a monitor check that
 *   started after the failure passed and the shared state is not Unhealthy — either the pool's next
 *   scheduled check, or the early confirmation probe (`confirm`, run by confirmation.ts about 1 s after
 *   the ejection, backing off), so a transient blip does not cost a whole interval. A safety bound
 *   (`maxEjectionMs`, 10 min) lifts the ejection if no check ran at all (monitor deleted, checker stuck).
 *   Without a monitor nothing would ever confirm recovery, so the ejection lasts `passiveEjectionMs`
 *   (10 s, like nginx's fail_timeout) and the origin is then tried again.
 * - A pool is healthy for routing while at least max(1, minimum_origins) of its origins are healthy by
 *   the rules above, so a pool whose origins were all ejected fails over to the next pool.
 */
export const STRIKES = 3;
export const STRIKE_WINDOW_MS = 30_000;

export interface HealthViewOptions {
  directory: PoolDirectory;
  live: LiveState;
  clock: Clock;
  passiveEjectionMs: number;
  maxEjectionMs?: number;
  /** Called once per new ejection (the monitor schedules a confirmation probe). */
  onEject?: (poolId: string, originName: string) => void;
}

interface Ejection {
  at: number;
  reason: string;
  /** +1 on every failure reported while ejected: a probe confirms only the ejection it started on. */
  generation: number;
  /** A confirmation probe that started after the last failure passed. */
  confirmed: boolean;
}

interface Strikes {
  first: number;
  count: number;
}

export class MonitoredHealthView implements HealthView {
  #directory: PoolDirectory;
  #live: LiveState;
  #clock: Clock;
  #passiveMs: number;
  #maxMs: number;
  #onEject: ((poolId: string, originName: string) => void) | undefined;
  #ejections = new Map<string, Ejection>();
  #strikes = new Map<string, Strikes>();
  #byId = new Map<string, Pool>();
  #unsubscribe: () => void;

  constructor(options: HealthViewOptions) {
    this.#directory = options.directory;
    this.#live = options.live;
    this.#clock = options.clock;
    this.#passiveMs = options.passiveEjectionMs;
    this.#maxMs = options.maxEjectionMs ?? 600_000;
    this.#onEject = options.onEject;
    this.#reindex();
    this.#unsubscribe = options.directory.onChange(() => this.#reindex());
  }

  originHealthy(poolId: string, originName: string): boolean {
    const pool = this.#byId.get(poolId);
    if (pool === undefined || !pool.enabled) return false;
    const origin = pool.origins.find((candidate) => candidate.name === originName);
    return origin !== undefined && this.#originUsable(pool, origin);
  }

  poolHealthy(poolId: string): boolean {
    const pool = this.#byId.get(poolId);
    if (pool === undefined || !pool.enabled) return false;
    let healthy = 0;
    for (const origin of pool.origins) if (this.#originUsable(pool, origin)) healthy += 1;
    return healthy >= Math.max(1, pool.minimum_origins);
  }

  reportFailure(poolId: string, originName: string, reason: string, kind?: LiveFailureKind): void {
    const key = keyOf(poolId, originName);
    const now = this.#clock.now();
    const ejection = this.#ejections.get(key);
    if (ejection !== undefined) {
      ejection.generation += 1;
      ejection.confirmed = false;
      return;
    }
    if (kind === 'timeout' || kind === 'network') {
      const strikes = this.#strikes.get(key);
      const current =
        strikes === undefined || now - strikes.first > STRIKE_WINDOW_MS
          ? { first: now, count: 1 }
          : { first: strikes.first, count: strikes.count + 1 };
      if (current.count < STRIKES) {
        this.#strikes.set(key, current);
        return;
      }
      reason = `${reason} (${STRIKES} in a row)`;
    }
    this.#strikes.delete(key);
    this.#ejections.set(key, { at: now, reason, generation: 0, confirmed: false });
    this.#onEject?.(poolId, originName);
  }

  reportSuccess(poolId: string, originName: string): void {
    // On the hot path: nothing to do (no key built) unless some origin has strikes.
    if (this.#strikes.size !== 0) this.#strikes.delete(keyOf(poolId, originName));
  }

  /** Why live traffic took this origin out of rotation in this process, if it did. */
  ejected(poolId: string, originName: string): string | undefined {
    return this.#ejections.get(keyOf(poolId, originName))?.reason;
  }

  /** The current ejection's generation, taken when a confirmation probe starts; undefined when not ejected. */
  ejectionTicket(poolId: string, originName: string): number | undefined {
    return this.#ejections.get(keyOf(poolId, originName))?.generation;
  }

  /**
   * A confirmation probe that started at `ticket` passed. It confirms recovery only if no failure was
   * reported since it started; the origin then returns unless the shared state is Unhealthy.
   */
  confirm(poolId: string, originName: string, ticket: number): boolean {
    const ejection = this.#ejections.get(keyOf(poolId, originName));
    if (ejection === undefined || ejection.generation !== ticket) return false;
    ejection.confirmed = true;
    return true;
  }

  close(): void {
    this.#unsubscribe();
  }

  #originUsable(pool: Pool, origin: Origin): boolean {
    if (!origin.enabled) return false;
    // The usual case on the hot path (asked twice per forwarded call): no ejection anywhere, no monitor.
    if (this.#ejections.size === 0 && pool.monitor === null) return true;
    const key = keyOf(pool.id, origin.name);
    const ejection = this.#ejections.get(key);
    const now = this.#clock.now();
    if (pool.monitor === null) {
      if (ejection === undefined) return true;
      if (now - ejection.at < this.#passiveMs) return false;
      this.#ejections.delete(key);
      return true;
    }
    const row = this.#live.origin(pool.id, origin.name);
    const state = row !== undefined && row.origin_address === stateAddress(origin) ? row : undefined;
    if (ejection !== undefined) {
      const notUnhealthy = state?.status !== 'Unhealthy';
      const checkedLater =
        state !== undefined && state.last_ok === 1 && notUnhealthy && Date.parse(state.checked_at) > ejection.at;
      const confirmed = checkedLater || (ejection.confirmed && notUnhealthy);
      if (!confirmed && now - ejection.at < this.#maxMs) return false;
      this.#ejections.delete(key);
    }
    return state?.status !== 'Unhealthy';
  }

  #reindex(): void {
    this.#byId = new Map(this.#directory.allPools().map((pool) => [pool.id, pool]));
  }
}

function keyOf(poolId: string, originName: string): string {
  return `${poolId}\u0000${originName}`;
}
