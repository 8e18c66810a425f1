/**
 * Runs one repeating task per key (one per pool), each on its own interval with jitter, so thousands of
 * pools never fire in lockstep:
 * - a new key first fires at a uniformly random point within its first interval (its phase);
 * - each later run is due `interval × (1 ± jitter)` after the previous one was DUE (default ±10 %), so
 *   neither the time a round takes (probes, the store) nor a timer firing late (a busy event loop)
 *   stretches the spacing of its checks: an origin is checked about interval × 1.1 at most after its
 *   previous check, however long its rounds take below interval × 0.9. When a run ends after the next
 *   one was due, the next starts at once (rounds of one pool never overlap; a slow round delays only its
 *   own pool) and the schedule continues from then: no burst of catch-up runs.
 * Timers are unref'd (they never keep the process alive); `stop()` clears them and waits for running tasks.
 * `random` and `clock` are injectable so tests can pin the phases and the time a run takes. The timers
 * are real (setTimeout), so the clock's monotonic time must move with them: the health monitor leaves
 * the default (the system clock) even when its dates come from an injected clock.
 */
import { type Clock, systemClock } from '../clock.js';

export interface SchedulerOptions {
  jitter?: number;
  random?: () => number;
  /** Read for its monotonic milliseconds (default: the system clock). */
  clock?: Clock;
  onError?: (key: string, err: unknown) => void;
}

interface ScheduledTask {
  intervalMs: number;
  task: () => Promise<void>;
  timer: NodeJS.Timeout | undefined;
  /** When the armed timer is due (`now()` time). */
  due: number;
  running: Promise<void> | undefined;
}

export class JitteredScheduler {
  #entries = new Map<string, ScheduledTask>();
  #jitter: number;
  #random: () => number;
  #clock: Clock;
  #onError: (key: string, err: unknown) => void;
  #stopped = false;

  constructor(options: SchedulerOptions = {}) {
    this.#jitter = options.jitter ?? 0.1;
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? systemClock;
    this.#onError = options.onError ?? (() => {});
  }

  /** Adds a key, or changes its interval/task (a changed interval applies from the next run). */
  set(key: string, intervalMs: number, task: () => Promise<void>): void {
    if (this.#stopped) return;
    const existing = this.#entries.get(key);
    if (existing !== undefined) {
      existing.task = task;
      if (existing.intervalMs !== intervalMs) {
        existing.intervalMs = intervalMs;
        if (existing.running === undefined) this.#arm(key, existing, this.#random() * intervalMs);
      }
      return;
    }
    const entry: ScheduledTask = { intervalMs, task, timer: undefined, due: 0, running: undefined };
    this.#entries.set(key, entry);
    this.#arm(key, entry, this.#random() * intervalMs);
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.#entries.delete(key);
  }

  keys(): string[] {
    return [...this.#entries.keys()];
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const running: Promise<void>[] = [];
    for (const entry of this.#entries.values()) {
      clearTimeout(entry.timer);
      if (entry.running !== undefined) running.push(entry.running);
    }
    this.#entries.clear();
    await Promise.allSettled(running);
  }

  #arm(key: string, entry: ScheduledTask, delayMs: number): void {
    clearTimeout(entry.timer);
    const delay = Math.max(0, delayMs);
    entry.due = this.#clock.monotonic() + delay;
    entry.timer = setTimeout(() => this.#fire(key, entry), delay);
    entry.timer.unref();
  }

  #fire(key: string, entry: ScheduledTask): void {
    entry.timer = undefined;
    const due = entry.due;
    entry.running = entry
      .task()
      .catch((err: unknown) => this.#onError(key, err))
      .finally(() => {
        entry.running = undefined;
        if (this.#stopped || this.#entries.get(key) !== entry) return;
        const spread = 1 + this.#jitter * (2 * this.#random() - 1);
        this.#arm(key, entry, due + entry.intervalMs * spread - this.#clock.monotonic());
      });
  }
}
