/**
 * Time as a dependency. Everything that reads dates (network retirement, back-off, deprecation-notice
 * intervals, health timestamps) or measures durations (latencies, timeouts, rates) takes a Clock, so tests
 * can stand on either side of a date and move time without waiting on it.
 *
 * Two readings: `now()` is wall-clock time (epoch milliseconds: dates, rows, the UTC day), `monotonic()`
 * only ever moves forward (milliseconds from an arbitrary origin: durations and intervals, immune to NTP
 * steps). A ManualClock moves both together.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Milliseconds from an arbitrary origin that never goes back; only differences mean anything. */
  monotonic(): number;
}

export const systemClock: Clock = { now: () => Date.now(), monotonic: () => performance.now() };

/** A clock that moves only when told to. For tests. */
export class ManualClock implements Clock {
  #now: number;
  #monotonic = 0;

  constructor(start: number | string | Date) {
    this.#now = typeof start === 'number' ? start : new Date(start).getTime();
  }

  now(): number {
    return this.#now;
  }

  monotonic(): number {
    return this.#monotonic;
  }

  /** Sets the wall clock; the monotonic reading moves forward by the same amount, never back. */
  set(to: number | string | Date): void {
    const next = typeof to === 'number' ? to : new Date(to).getTime();
    this.#monotonic += Math.max(0, next - this.#now);
    this.#now = next;
  }

  advance(ms: number): void {
    this.#now += ms;
    this.#monotonic += Math.max(0, ms);
  }
}

/** A wall clock offset from the system's by a fixed amount (tests of clocks that disagree). */
export function offsetClock(offsetMs: number): Clock {
  return { now: () => Date.now() + offsetMs, monotonic: () => performance.now() };
}
