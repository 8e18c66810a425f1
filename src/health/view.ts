import type { HealthView, Origin, Pool, PoolDirectory } from '../balancing/model.js';
import type { Clock } from '../clock.js';
import type { LiveState } from './live-state.js';

/**
 * The monitor-backed HealthView the gateway routes by. Synchronous: every answer comes from memory.
 * - Disabled pools and origins are never healthy (never routed to).
 * - Pools with a monitor: an origin is healthy unless its state is Unhealthy (Unknown — not yet
 *   established right after start — counts as healthy so the gateway serves from the first second).
 * - Pools without a monitor: enabled origins are healthy.
 * - `reportFailure` (live traffic: connection refused, timeout) ejects the origin in this process at once.
 *   With a monitor it comes back only when a check that started after the failure passed and the state is
 *   not Unhealthy; a safety bound (`maxEjectionMs`, 10 min) lifts the ejection if no check ran at all
 *   (monitor deleted, checker stuck). Without a monitor nothing would ever confirm recovery, so the
 *   ejection lasts `passiveEjectionMs` (10 s, like nginx's fail_timeout) and the origin is then tried again.
 * - A pool is healthy for routing while at least max(1, minimum_origins) of its origins are healthy by
 *   the rules above, so a pool whose origins were all ejected fails over to the next pool.
 */
export interface HealthViewOptions {
  directory: PoolDirectory;
  live: LiveState;
  clock: Clock;
  passiveEjectionMs: number;
  maxEjectionMs?: number;
}

interface Ejection {
  at: number;
  reason: string;
}

export class MonitoredHealthView implements HealthView {
  #directory: PoolDirectory;
  #live: LiveState;
  #clock: Clock;
  #passiveMs: number;
  #maxMs: number;
  #ejections = new Map<string, Ejection>();
  #byId = new Map<string, Pool>();
  #unsubscribe: () => void;

  constructor(options: HealthViewOptions) {
    this.#directory = options.directory;
    this.#live = options.live;
    this.#clock = options.clock;
    this.#passiveMs = options.passiveEjectionMs;
    this.#maxMs = options.maxEjectionMs ?? 600_000;
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

  reportFailure(poolId: string, originName: string, reason: string): void {
    const key = `${poolId}\u0000${originName}`;
    if (!this.#ejections.has(key)) this.#ejections.set(key, { at: this.#clock.now(), reason });
  }

  /** Whether live traffic took this origin out of rotation in this process (for the health report). */
  ejected(poolId: string, originName: string): string | undefined {
    return this.#ejections.get(`${poolId}\u0000${originName}`)?.reason;
  }

  close(): void {
    this.#unsubscribe();
  }

  #originUsable(pool: Pool, origin: Origin): boolean {
    if (!origin.enabled) return false;
    const key = `${pool.id}\u0000${origin.name}`;
    const ejection = this.#ejections.get(key);
    const now = this.#clock.now();
    if (pool.monitor === null) {
      if (ejection === undefined) return true;
      if (now - ejection.at < this.#passiveMs) return false;
      this.#ejections.delete(key);
      return true;
    }
    const row = this.#live.origin(pool.id, origin.name);
    const state = row !== undefined && row.origin_address === origin.address ? row : undefined;
    if (ejection !== undefined) {
      const confirmed =
        state !== undefined &&
        state.last_ok === 1 &&
        state.status !== 'Unhealthy' &&
        Date.parse(state.checked_at) > ejection.at;
      if (!confirmed && now - ejection.at < this.#maxMs) return false;
      this.#ejections.delete(key);
    }
    return state?.status !== 'Unhealthy';
  }

  #reindex(): void {
    this.#byId = new Map(this.#directory.allPools().map((pool) => [pool.id, pool]));
  }
}
