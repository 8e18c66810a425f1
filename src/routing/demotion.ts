/**
 * Connect demotion: when live traffic cannot connect to an origin, routing tries that origin last for
 * `durationMs` (default 5 s) without waiting for a monitor to notice. A demoted origin is never
 * excluded: routing still tries it after every other candidate of the network, so a blip on every origin
 * at once cannot turn into an outage of its own making. Not to be confused with the HealthView's passive
 * ejection (health/view.ts, `health.passive_ejection`, 10 s), which takes an origin out of routing.
 * Durations are read on the injected Clock's monotonic time.
 */
import type { Clock } from '../clock.js';

export const DEFAULT_DEMOTION_MS = 5_000;

export class ConnectDemotion {
  readonly #clock: Clock;
  readonly #durationMs: number;
  readonly #until = new Map<string, number>();

  constructor(clock: Clock, durationMs = DEFAULT_DEMOTION_MS) {
    this.#clock = clock;
    this.#durationMs = durationMs;
  }

  demote(poolId: string, originName: string): void {
    this.#until.set(key(poolId, originName), this.#clock.monotonic() + this.#durationMs);
  }

  isDemoted(poolId: string, originName: string): boolean {
    if (this.#until.size === 0) return false; // the usual case: no key built on the hot path
    const k = key(poolId, originName);
    const until = this.#until.get(k);
    if (until === undefined) return false;
    if (this.#clock.monotonic() < until) return true;
    this.#until.delete(k);
    return false;
  }
}

function key(poolId: string, originName: string): string {
  return `${poolId}\u0000${originName}`;
}
