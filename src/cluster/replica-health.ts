/**
 * A gateway worker's HealthView (SPEC §11): the control process's verdicts, pushed whole when they
 * change (publisher.ts: checked every HEALTH_PUSH_MS, 250 ms, and at once after workers' reports), read
 * synchronously on the hot path.
 *
 * Live outcomes go back to the control process, which owns passive ejection for every worker together
 * (health/view.ts rules: a refused connection ejects at once, three timeouts in a row without a success
 * between them eject). They are queued and sent every REPORT_FLUSH_MS (20 ms) in order; successes are
 * cheap on the hot path — one nested-map lookup — and a run of successes on one origin is sent once
 * per flush.
 * The ejection comes back in the next health push (tens of ms); meanwhile the worker's own connect
 * demotion (routing/demotion.ts, 5 s, per worker) already steers it away from a refused origin.
 *
 * An origin the push does not know yet (a pool created a moment ago) is healthy while it and its pool
 * are enabled in the replica directory, as the control's view counts an unchecked origin healthy.
 */
import type { HealthView, LiveFailureKind } from '../model/health-view.js';
import type { PoolDirectory } from '../model/pool.js';
import type { HealthReport, PushedHealth } from './messages.js';

export const REPORT_FLUSH_MS = 20;

export class ReplicaHealthView implements HealthView {
  readonly #directory: PoolDirectory;
  readonly #send: (reports: HealthReport[]) => void;
  #health: PushedHealth;
  #queue: HealthReport[] = [];
  /** pool id → origin name → the last queued report is a success (a repeat is not queued). */
  readonly #lastOk = new Map<string, Map<string, boolean>>();
  #timer: NodeJS.Timeout | undefined;

  constructor(directory: PoolDirectory, health: PushedHealth, send: (reports: HealthReport[]) => void) {
    this.#directory = directory;
    this.#health = health;
    this.#send = send;
  }

  replace(health: PushedHealth): void {
    this.#health = health;
  }

  originHealthy(poolId: string, originName: string): boolean {
    const verdict = this.#health[poolId]?.origins[originName];
    if (verdict !== undefined) return verdict;
    const pool = this.#directory.poolById(poolId);
    if (pool === undefined || !pool.enabled) return false;
    return pool.origins.some((origin) => origin.name === originName && origin.enabled);
  }

  poolHealthy(poolId: string): boolean {
    const verdict = this.#health[poolId]?.healthy;
    if (verdict !== undefined) return verdict;
    return this.#directory.allPools().some((pool) => pool.id === poolId && pool.enabled);
  }

  reportFailure(poolId: string, originName: string, reason: string, kind?: LiveFailureKind): void {
    this.#lastOk.get(poolId)?.set(originName, false);
    this.#enqueue({ pool: poolId, origin: originName, ok: false, reason, kind });
  }

  reportSuccess(poolId: string, originName: string): void {
    let byOrigin = this.#lastOk.get(poolId);
    if (byOrigin === undefined) {
      byOrigin = new Map();
      this.#lastOk.set(poolId, byOrigin);
    }
    if (byOrigin.get(originName) === true) return;
    byOrigin.set(originName, true);
    this.#enqueue({ pool: poolId, origin: originName, ok: true });
  }

  /** Sends what is queued now (on close). */
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#queue.length === 0) return;
    const reports = this.#queue;
    this.#queue = [];
    // Each flush may carry one success per origin again: another worker's failures may lie between.
    this.#lastOk.clear();
    this.#send(reports);
  }

  #enqueue(report: HealthReport): void {
    this.#queue.push(report);
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => this.flush(), REPORT_FLUSH_MS);
    this.#timer.unref();
  }
}
