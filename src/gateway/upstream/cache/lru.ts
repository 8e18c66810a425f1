/**
 * A least-recently-used map bounded by bytes, not by entry count: cached answers range from a few bytes
 * (eth_chainId) to megabytes (a block with full transactions). A Map keeps insertion order, so the
 * first key is the least recently used one; `get` moves a hit to the end. Each entry costs its body's
 * length plus its key's length plus a fixed overhead (`ENTRY_OVERHEAD_BYTES`) for the bookkeeping
 * objects; an entry larger than `maxEntryBytes` is not stored at all, so one huge answer cannot flush
 * the whole cache.
 *
 * Moving a key costs a Map delete and insert, a visible share of a cache hit. So recency is tracked
 * approximately: each insert or move stamps the entry with a rising tick, and a hit is moved only when
 * at least half the map's size in stamps happened since its own (fewer mean fewer than half the keys
 * are ahead of it: it is still in the recent half). Consequence, checked by lru.test.ts: an entry is
 * evicted only after at least a quarter of the entries were used after its last use — a hot entry
 * (a chain id read thousands of times a second) is never moved more than once per size/2 stamps, and
 * never evicted.
 */

export const ENTRY_OVERHEAD_BYTES = 160;

export interface Sized {
  readonly bytes: number;
}

interface Slot<V> {
  readonly value: V;
  /** `#tick` when the entry was inserted or last moved to the recent end. */
  tick: number;
}

export class ByteLru<V extends Sized> {
  readonly maxBytes: number;
  readonly maxEntryBytes: number;
  readonly #map = new Map<string, Slot<V>>();
  #tick = 0;
  #bytes = 0;
  #evictions = 0;
  readonly #onEvict: ((key: string, value: V) => void) | undefined;

  constructor(options: { maxBytes: number; maxEntryBytes?: number; onEvict?: (key: string, value: V) => void }) {
    this.maxBytes = options.maxBytes;
    this.maxEntryBytes = Math.min(options.maxEntryBytes ?? options.maxBytes, options.maxBytes);
    this.#onEvict = options.onEvict;
  }

  get size(): number {
    return this.#map.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Entries dropped to make room, since creation. */
  get evictions(): number {
    return this.#evictions;
  }

  static cost(key: string, value: Sized): number {
    return value.bytes + key.length + ENTRY_OVERHEAD_BYTES;
  }

  get(key: string): V | undefined {
    const slot = this.#map.get(key);
    if (slot === undefined) return undefined;
    if (this.#tick - slot.tick > this.#map.size >> 1) {
      this.#map.delete(key);
      slot.tick = ++this.#tick;
      this.#map.set(key, slot);
    }
    return slot.value;
  }

  /** Reads without touching recency (for bookkeeping scans). */
  peek(key: string): V | undefined {
    return this.#map.get(key)?.value;
  }

  has(key: string): boolean {
    return this.#map.has(key);
  }

  /** Stores the value (replacing an older one) and evicts from the cold end; false if too large to keep. */
  set(key: string, value: V): boolean {
    const cost = ByteLru.cost(key, value);
    this.delete(key);
    if (cost > this.maxEntryBytes) return false;
    this.#map.set(key, { value, tick: ++this.#tick });
    this.#bytes += cost;
    for (const [oldKey, old] of this.#map) {
      if (this.#bytes <= this.maxBytes) break;
      this.#remove(oldKey, old.value);
      this.#evictions += 1;
      this.#onEvict?.(oldKey, old.value);
    }
    return true;
  }

  delete(key: string): boolean {
    const slot = this.#map.get(key);
    if (slot === undefined) return false;
    this.#remove(key, slot.value);
    return true;
  }

  #remove(key: string, value: V): void {
    this.#map.delete(key);
    this.#bytes -= ByteLru.cost(key, value);
  }
}
