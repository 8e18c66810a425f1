/**
 * A least-recently-used map bounded by bytes, not by entry count: cached answers range from a few bytes
 * (eth_chainId) to megabytes (a block with full transactions). A Map keeps insertion order, so the
 * first key is the least recently used one; `get` moves a hit to the end. Each entry costs its body's
 * length plus its key's length plus a fixed overhead (`ENTRY_OVERHEAD_BYTES`) for the bookkeeping
 * objects; an entry larger than `maxEntryBytes` is not stored at all, so one huge answer cannot flush
 * the whole cache.
 */

export const ENTRY_OVERHEAD_BYTES = 160;

export interface Sized {
  readonly bytes: number;
}

export class ByteLru<V extends Sized> {
  readonly maxBytes: number;
  readonly maxEntryBytes: number;
  readonly #map = new Map<string, V>();
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
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  /** Reads without touching recency (for bookkeeping scans). */
  peek(key: string): V | undefined {
    return this.#map.get(key);
  }

  has(key: string): boolean {
    return this.#map.has(key);
  }

  /** Stores the value (replacing an older one) and evicts from the cold end; false if too large to keep. */
  set(key: string, value: V): boolean {
    const cost = ByteLru.cost(key, value);
    this.delete(key);
    if (cost > this.maxEntryBytes) return false;
    this.#map.set(key, value);
    this.#bytes += cost;
    for (const [oldKey, oldValue] of this.#map) {
      if (this.#bytes <= this.maxBytes) break;
      this.#remove(oldKey, oldValue);
      this.#evictions += 1;
      this.#onEvict?.(oldKey, oldValue);
    }
    return true;
  }

  delete(key: string): boolean {
    const value = this.#map.get(key);
    if (value === undefined) return false;
    this.#remove(key, value);
    return true;
  }

  #remove(key: string, value: V): void {
    this.#map.delete(key);
    this.#bytes -= ByteLru.cost(key, value);
  }
}
