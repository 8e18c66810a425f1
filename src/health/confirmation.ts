import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { Pool, PoolDirectory } from '../model/pool.js';
import { checkOrigin } from './probes/check.js';
import type { ProbeTransport } from './probes/transport.js';
import type { PoolPlan } from './round.js';
import type { MonitoredHealthView } from './view.js';

/**
 * Early confirmation probes. When live traffic ejects an origin of a monitored pool (view.ts), waiting
 * for the pool's next scheduled check could keep a healthy origin out for a whole `interval` (60 s by
 * default) after a transient blip. So this process probes that one origin itself, with the pool's own
 * monitor (same check, timeout and retries):
 * - first `confirm_delay` (1 s) after the ejection, then doubling (2 s, 4 s, …, at most MAX_DELAY_MS,
 *   60 s) while the probe fails, until it passes or the ejection ends otherwise (a scheduled check
 *   confirmed it, the origin was disabled or removed, the monitor is gone);
 * - a passing probe lifts the ejection only if no new failure was reported while it ran and the shared
 *   state is not Unhealthy ("returns only when the monitor says so" still holds);
 * - an origin ejected again within FLAP_WINDOW_MS (60 s) of its last confirmation starts from twice the
 *   delay that confirmed it last time, so an origin that keeps failing live traffic while passing its
 *   checks is kept out for longer and longer stretches instead of flapping every second.
 * Probe results stay in this process: they are not checks of the shared state machine (no counters,
 * no events, no block-lag comparison — that needs the whole pool and is the scheduled round's job).
 * Timers are unref'd; `runDue()` probes every pending origin now (tests, with an injected clock).
 */
export const MAX_DELAY_MS = 60_000;
export const FLAP_WINDOW_MS = 60_000;

export interface ConfirmerOptions {
  view: MonitoredHealthView;
  directory: PoolDirectory;
  transport: ProbeTransport;
  clock: Clock;
  logger: Logger;
  /** The pool's monitor and expected chain ids, as a scheduled round would use them. */
  plan(pool: Pool): Promise<PoolPlan>;
  baseDelayMs: number;
  onProbe?: (passed: boolean) => void;
}

interface Pending {
  poolId: string;
  originName: string;
  delayMs: number;
  timer: NodeJS.Timeout | undefined;
  running: Promise<void> | undefined;
}

export class EjectionConfirmer {
  #o: ConfirmerOptions;
  #pending = new Map<string, Pending>();
  /** When each origin was last confirmed (monotonic ms), and the delay that confirmation came after. */
  #confirmed = new Map<string, { at: number; delayMs: number }>();
  #stopped = false;

  constructor(options: ConfirmerOptions) {
    this.#o = options;
  }

  /** An origin was just ejected: schedule its first confirmation probe (monitored pools only). */
  schedule(poolId: string, originName: string): void {
    if (this.#stopped) return;
    const pool = this.#o.directory.poolById(poolId);
    if (pool === undefined || pool.monitor === null) return;
    const key = `${poolId}\u0000${originName}`;
    if (this.#pending.has(key)) return;
    const last = this.#confirmed.get(key);
    const now = this.#o.clock.monotonic();
    const delayMs =
      last !== undefined && now - last.at < FLAP_WINDOW_MS
        ? Math.min(2 * last.delayMs, MAX_DELAY_MS)
        : this.#o.baseDelayMs;
    const entry: Pending = { poolId, originName, delayMs, timer: undefined, running: undefined };
    this.#pending.set(key, entry);
    this.#arm(key, entry);
  }

  /** Probes every origin waiting for confirmation now, and waits for the probes. */
  async runDue(): Promise<void> {
    await Promise.all([...this.#pending.entries()].map(([key, entry]) => this.#fire(key, entry)));
  }

  /** How many origins wait for a confirmation probe (for tests and metrics). */
  get pending(): number {
    return this.#pending.size;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const running: Promise<void>[] = [];
    for (const entry of this.#pending.values()) {
      clearTimeout(entry.timer);
      if (entry.running !== undefined) running.push(entry.running);
    }
    this.#pending.clear();
    await Promise.allSettled(running);
  }

  #arm(key: string, entry: Pending): void {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      this.#fire(key, entry).catch((err: unknown) => this.#o.logger.warn('confirmation probe failed', { err }));
    }, entry.delayMs);
    entry.timer.unref();
  }

  #fire(key: string, entry: Pending): Promise<void> {
    if (entry.running !== undefined) return entry.running;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.running = this.#probe(key, entry).finally(() => {
      entry.running = undefined;
    });
    return entry.running;
  }

  async #probe(key: string, entry: Pending): Promise<void> {
    const { view, directory, clock } = this.#o;
    const { poolId, originName } = entry;
    const done = () => {
      if (this.#pending.get(key) === entry) this.#pending.delete(key);
    };
    const ticket = view.ejectionTicket(poolId, originName);
    const pool = directory.poolById(poolId);
    const origin = pool?.origins.find((candidate) => candidate.name === originName);
    if (ticket === undefined || pool === undefined || origin === undefined) return done();
    if (!pool.enabled || !origin.enabled || pool.monitor === null) return done();
    const plan = await this.#o.plan(pool);
    if (plan.monitor === undefined) return done();
    const transport = this.#o.transport.forAccount(pool.account_id);
    const result = await checkOrigin(transport, origin, plan.monitor, plan.expectedChainIds);
    if (this.#stopped) return;
    this.#o.onProbe?.(result.ok);
    if (result.ok && view.confirm(poolId, originName, ticket)) {
      this.#confirmed.set(key, { at: clock.monotonic(), delayMs: entry.delayMs });
      this.#o.logger.info('origin confirmed after a live-traffic ejection', {
        pool: pool.name,
        origin: originName,
        after_ms: entry.delayMs,
      });
      return done();
    }
    if (view.ejectionTicket(poolId, originName) === undefined) return done();
    entry.delayMs = Math.min(2 * entry.delayMs, MAX_DELAY_MS);
    if (this.#pending.get(key) === entry) this.#arm(key, entry);
  }
}
