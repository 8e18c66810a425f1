/**
 * A small seeded PRNG for tests that generate inputs: the same seed gives the same sequence on every
 * machine, so a failure can name its seed and be replayed. mulberry32: 32 bits of state, one uniform
 * float in [0, 1) per draw; fast and well spread, not for anything cryptographic.
 */

/** mulberry32: a 32-bit state, a uniform float in [0, 1) per call. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Draws from one mulberry32 stream. */
export class Rng {
  readonly #next: () => number;
  constructor(seed: number) {
    this.#next = mulberry32(seed);
  }
  next(): number {
    return this.#next();
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.#next() * n);
  }
  chance(p: number): boolean {
    return this.#next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}
