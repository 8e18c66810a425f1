/**
 * The map behind write-affinity.ts, filter-affinity.ts and the resend memory (hooks/send-memory.ts):
 * entries by key, each with the ms `until` which it counts (on the clock reading its owner uses), at most `maxEntries` of them (the least recently set dropped first: a Map keeps
 * insertion order, and an entry set again is re-inserted last). An expired entry is dropped when met.
 */
export class AffinityMap<V extends { readonly until: number }> {
  readonly #entries = new Map<string, V>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Sets the entry as the most recent; drops the oldest beyond maxEntries. */
  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  /**
   * Sets an entry another process recorded (affinity-share.ts), unless the one held counts at least as
   * long: the later record wins, and this process's own, echoed back, changes nothing.
   */
  adopt(key: string, value: V): void {
    const held = this.#entries.get(key);
    if (held === undefined || held.until < value.until) this.set(key, value);
  }

  /** The entry while it counts at `now`; an expired one is dropped. */
  live(key: string, now: number): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    if (value.until <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return value;
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Every entry that counts at `now`, least recently set first; expired ones are dropped. */
  liveValues(now: number): V[] {
    const live: V[] = [];
    for (const [key, value] of this.#entries) {
      if (value.until <= now) this.#entries.delete(key);
      else live.push(value);
    }
    return live;
  }
}
