/**
 * Time as a dependency. Everything that reads dates (network retirement, back-off, deprecation-notice
 * intervals, health timestamps) takes a Clock so tests can stand on either side of a date.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to. For tests. */
export class ManualClock implements Clock {
  #now: number;

  constructor(start: number | string | Date) {
    this.#now = typeof start === 'number' ? start : new Date(start).getTime();
  }

  now(): number {
    return this.#now;
  }

  set(to: number | string | Date): void {
    this.#now = typeof to === 'number' ? to : new Date(to).getTime();
  }

  advance(ms: number): void {
    this.#now += ms;
  }
}
