/**
 * A stall condition: something that should advance (the network head, or its finalized block) has not
 * for `threshold` ms. Pure: fed advances and the time, it says when a stall begins and ends.
 *
 * Threshold: the configured value, or derived from the chain — `factor` × the median interval between the
 * last `window` advances (block timestamps for heads, arrival times for finality), at least `floorMs`;
 * with no configured value there is no alert before `minSamples` advances were seen (too little to judge
 * a chain's pace). With a configured value one advance is enough to start the clock.
 *
 * Hysteresis: START once nothing advanced for the threshold (so a slow block under it pages nobody);
 * END only after RECOVER_ADVANCES (2) advances since the stall began, so a chain that creeps one block at
 * a time past the threshold does not flap START/END with every block.
 */
export const RECOVER_ADVANCES = 2;

export interface StallSettings {
  /** ms; undefined: derived. */
  readonly configured: number | undefined;
  /** Multiplier of the median interval. */
  readonly factor: number;
  /** Advances kept for the median (their intervals are one fewer). */
  readonly window: number;
  /** Advances needed before a derived threshold counts. */
  readonly minSamples: number;
  /** Lowest derived threshold, ms (may depend on another threshold: read at each check). */
  floorMs(): number;
}

export type StallChange = { readonly kind: 'start' | 'end'; readonly number: number; readonly since: number };

export class Stall {
  readonly #settings: StallSettings;
  /** Sample times (ms) of the last `window` advances, for the median interval. */
  readonly #times: number[] = [];
  #advances = 0;
  #highest: number | undefined;
  #lastAdvanceAt: number | undefined;
  #stalled = false;
  #advancesSinceStall = 0;

  constructor(settings: StallSettings) {
    this.#settings = settings;
  }

  get stalled(): boolean {
    return this.#stalled;
  }

  /**
   * The incident is open in the store (recorded by an earlier run or another process): wait for its END.
   * `number` is the block it stalled at (its data): values up to it are no advance, so a restarted
   * process whose canonical chain first shows a lagging origin's head and then catches up to the stalled
   * block does not take that catch-up for a recovery.
   */
  adopt(now: number, number?: number): void {
    this.#stalled = true;
    this.#advancesSinceStall = 0;
    this.#lastAdvanceAt ??= now;
    if (number !== undefined && (this.#highest === undefined || number > this.#highest)) this.#highest = number;
  }

  /**
   * A new value was seen at `now` (ms). `sampleMs` is what the median is taken over (a block's timestamp
   * in ms for heads, `now` for finality). Only a value above the highest seen is an advance.
   */
  advance(number: number, now: number, sampleMs: number): StallChange | undefined {
    if (this.#highest !== undefined && number <= this.#highest) return undefined;
    // The first value a run sees is a baseline, not a recovery (an adopted stall needs two real advances).
    const first = this.#highest === undefined;
    this.#highest = number;
    this.#lastAdvanceAt = now;
    this.#advances += 1;
    this.#times.push(sampleMs);
    if (this.#times.length > this.#settings.window) this.#times.shift();
    if (!this.#stalled || first) return undefined;
    this.#advancesSinceStall += 1;
    if (this.#advancesSinceStall < RECOVER_ADVANCES) return undefined;
    this.#stalled = false;
    return { kind: 'end', number, since: now };
  }

  /** The threshold in force (ms), or undefined while too little was seen to judge. */
  threshold(): number | undefined {
    const { configured, factor, minSamples } = this.#settings;
    if (configured !== undefined) return this.#advances >= 1 ? configured : undefined;
    if (this.#advances < minSamples) return undefined;
    const intervals: number[] = [];
    for (let i = 1; i < this.#times.length; i++)
      intervals.push((this.#times[i] as number) - (this.#times[i - 1] as number));
    return Math.max(this.#settings.floorMs(), factor * median(intervals));
  }

  /** Checks the time: a START when nothing advanced for the threshold. */
  check(now: number): StallChange | undefined {
    if (this.#stalled || this.#lastAdvanceAt === undefined || this.#highest === undefined) return undefined;
    const threshold = this.threshold();
    if (threshold === undefined || now - this.#lastAdvanceAt < threshold) return undefined;
    this.#stalled = true;
    this.#advancesSinceStall = 0;
    return { kind: 'start', number: this.#highest, since: this.#lastAdvanceAt };
  }
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
